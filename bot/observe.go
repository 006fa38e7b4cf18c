package bot

import (
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/claudeproc"
)

// Observer is told what the bot's sessions do, for metrics (cmd/claudeops
// wires in package metrics). Each happening is told once: by the worker
// of the thread it happens in, or by Recover for what a previous run left
// (a turn a restart cut off is told there, as interrupted, by the one
// start that closes it). Calls come from many goroutines and must return
// at once. No argument holds an id but the channel's in Spent.
type Observer interface {
	// ProcessStarted: a claude process started, resuming a stored
	// session or not.
	ProcessStarted(resumed bool)
	// ProcessStartFailed: a claude process could not be started.
	ProcessStartFailed()
	// ProcessCrashed: a claude process ended without the bot stopping it.
	ProcessCrashed()
	// ResumeLost: a stored session could not be resumed; the thread goes
	// on in a fresh one.
	ResumeLost()
	// TurnEnded: a turn ended with result (one of the Turn results) after
	// took; took is 0 when not known (a turn closed by Recover).
	TurnEnded(result string, took time.Duration)
	// FirstText: the first text of an answer was posted, wait after the
	// person's message that asked for it reached the bot.
	FirstText(wait time.Duration)
	// Spent: what one turn in the thread used; of the thread only its
	// platform and channel may be kept.
	Spent(t adapters.ThreadRef, u Usage)
	// ApprovalSettled: a prompt put before people ended. kind is "tool"
	// or "question"; outcome one of the Approval outcomes.
	ApprovalSettled(kind, outcome string)
}

// Usage is what one turn used, as its result reports it.
type Usage struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheCreationTokens int64
	CostUSD                                                         float64
}

// Results of a turn, as Observer.TurnEnded is told them: the CLI's result
// subtype where it names an error, and the bot's own for turns that
// ended without a result.
const (
	TurnSuccess              = "success"
	TurnError                = "error" // is_error on a "success" result: an API error
	TurnErrorDuringExecution = "error_during_execution"
	TurnErrorMaxTurns        = "error_max_turns"
	TurnErrorMaxBudget       = "error_max_budget_usd"
	TurnErrorOther           = "error_other" // a subtype this bot does not know
	TurnAborted              = "aborted"     // the process ended mid-turn
	TurnInterrupted          = "interrupted" // a restart of the bot cut it off
)

// Outcomes of a prompt, as Observer.ApprovalSettled is told them.
const (
	ApprovalAllowed   = "allowed"
	ApprovalAnswered  = "answered" // a question
	ApprovalDenied    = "denied"
	ApprovalExpired   = "expired"
	ApprovalCancelled = "cancelled"
)

// turnResult is r's result among the Turn results: a small fixed set,
// whatever subtype the CLI invents.
func turnResult(r *claudeproc.Result) string {
	switch r.Subtype {
	case "success", "":
		if r.IsError {
			return TurnError
		}
		return TurnSuccess
	case TurnErrorDuringExecution, TurnErrorMaxTurns, TurnErrorMaxBudget:
		return r.Subtype
	}
	return TurnErrorOther
}

// approvalOutcome is the outcome of a prompt of kind that ended in state
// (an approvals.State).
func approvalOutcome(kind, state string) string {
	if state == string(approvals.StateAllowed) && kind == "question" {
		return ApprovalAnswered
	}
	return state
}

// usageOf is what r's turn used.
func usageOf(r *claudeproc.Result, cost float64) Usage {
	in, out := turnTokens(r)
	return Usage{
		InputTokens: in, OutputTokens: out,
		CacheReadTokens: r.Usage.CacheReadInputTokens, CacheCreationTokens: r.Usage.CacheCreationInputTokens,
		CostUSD: cost,
	}
}

// nopObserver observes nothing: the default.
type nopObserver struct{}

func (nopObserver) ProcessStarted(bool)                  {}
func (nopObserver) ProcessStartFailed()                  {}
func (nopObserver) ProcessCrashed()                      {}
func (nopObserver) ResumeLost()                          {}
func (nopObserver) TurnEnded(string, time.Duration)      {}
func (nopObserver) FirstText(time.Duration)              {}
func (nopObserver) Spent(adapters.ThreadRef, Usage)      {}
func (nopObserver) ApprovalSettled(kind, outcome string) {}

// turnTokens are the input and output tokens of r's turn. A result the
// CLI cut at its budget reports zeros in usage; the per-model figures
// still hold what the turn used.
func turnTokens(r *claudeproc.Result) (in, out int64) {
	in, out = r.Usage.InputTokens, r.Usage.OutputTokens
	if in == 0 && out == 0 {
		for _, u := range r.ModelUsageSinceLastResult {
			in += u.InputTokens
			out += u.OutputTokens
		}
	}
	return in, out
}
