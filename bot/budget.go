package bot

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
)

// Spend budgets. Before a turn the stored spend decides (store.turns: each
// finished turn's cost as its result reported it): a thread or channel at
// or over its budget refuses the message, and nothing reaches Claude.
// During a turn the CLI decides: each process is started with
// --max-budget-usd set to what is left of the tightest budget that applies
// (the CLI counts what its process spent, checks it after every model
// request, and ends the turn with an error_max_budget_usd result, running
// no further tool). Stream events carry token counts but no cost, so the
// CLI is the one that can tell, mid-turn, that a budget is crossed.
//
// A live process's cap goes stale when another thread of the channel
// spends, or the day turns: before each turn it is compared with what is
// left, and a process whose cap differs is restarted (resumed) with the
// new one. When a turn ends and the channel is over its budget, the
// channel's other running turns are stopped. Several turns running at once
// in a channel may each spend what was left when they started, and a turn
// may overshoot by the one model request that crossed the line.

// budgetKind names a budget.
type budgetKind int

const (
	budgetNone budgetKind = iota
	budgetThread
	budgetChannel
	budgetRun
)

// budgetExhausted: the CLI ended the turn at its --max-budget-usd.
func budgetExhausted(r *claudeproc.Result) bool {
	return r.Subtype == "error_max_budget_usd" || r.TerminalReason == "budget_exhausted"
}

// spendNow is what the thread and its channel (today, UTC) have spent.
type spendNow struct{ thread, channelDay float64 }

func (w *worker) spendNow(ctx context.Context) (spendNow, error) {
	var s spendNow
	if w.cfg.Limits.ThreadUSD > 0 {
		u, err := w.store.ThreadUsage(ctx, string(w.key))
		if err != nil {
			return s, err
		}
		s.thread = u.CostUSD
	}
	if w.cfg.Limits.ChannelDayUSD > 0 {
		u, err := w.store.ChannelUsageSince(ctx, w.ref.ChannelKey(), dayStart(w.now()))
		if err != nil {
			return s, err
		}
		s.channelDay = u.CostUSD
	}
	return s, nil
}

// overBudget is the budget that s has reached: the thread's, else the
// channel's; budgetNone when neither.
func (l Limits) overBudget(s spendNow) budgetKind {
	switch {
	case l.ThreadUSD > 0 && s.thread >= l.ThreadUSD:
		return budgetThread
	case l.ChannelDayUSD > 0 && s.channelDay >= l.ChannelDayUSD:
		return budgetChannel
	}
	return budgetNone
}

// spentText says which budget is spent, and how much.
func (l Limits) spentText(k budgetKind, s spendNow, run float64) string {
	switch k {
	case budgetThread:
		return fmt.Sprintf("this thread's budget is spent: %s of %s (%s)", spent(s.thread), usd(l.ThreadUSD), envBudgetThread)
	case budgetChannel:
		return fmt.Sprintf("this channel's budget for today is spent: %s of %s (%s); it renews at 00:00 UTC", spent(s.channelDay), usd(l.ChannelDayUSD), envBudgetChannel)
	case budgetRun:
		return fmt.Sprintf("this scheduled run's budget is spent: %s of %s (%s)", spent(run), usd(l.ScheduleRunUSD), envBudgetSchedule)
	}
	return "a budget is spent"
}

// budgetGate refuses a prompt when the thread or its channel has spent its
// budget; it reports whether it did (the prompt then never reaches
// Claude). A spend that cannot be read refuses too: a budget nobody can
// check is not kept.
func (w *worker) budgetGate(ctx context.Context, p thread.Prompt) bool {
	l := w.cfg.Limits
	if l.ThreadUSD <= 0 && l.ChannelDayUSD <= 0 {
		return false
	}
	s, err := w.spendNow(ctx)
	var why string
	switch {
	case err != nil:
		w.log.Error("read spend for the budget check", "err", err)
		why = "the spend of this thread could not be read to check its budget"
	case l.overBudget(s) != budgetNone:
		why = l.spentText(l.overBudget(s), s, 0)
	default:
		return false
	}
	w.notice(ctx, "Not sent to Claude: "+why+".", true)
	if p.Auto != "" {
		// The scheduler's own prompt: the run ends here.
		w.audit(ctx, "scheduler", "refused", "prompt", why, false)
		w.finishRun(runOutcome{err: errors.New("not run: " + why)})
		return true
	}
	w.audit(ctx, p.User.ID, "refused", "prompt", why, false)
	return true
}

// budgetCap is a process's --max-budget-usd, and the budget it comes from.
type budgetCap struct {
	usd  float64
	kind budgetKind
}

// processCap is the cap of a process starting now: what is left of the
// tightest budget that applies. ok is false when none applies. A spend
// that cannot be read leaves the whole budget as the cap.
func (w *worker) processCap(ctx context.Context) (c budgetCap, ok bool) {
	l := w.cfg.Limits
	s, err := w.spendNow(ctx)
	if err != nil {
		w.log.Error("read spend for the session's budget cap", "err", err)
	}
	take := func(budget, used float64, k budgetKind) {
		if budget <= 0 {
			return
		}
		if left := budget - used; !ok || left < c.usd {
			c, ok = budgetCap{usd: left, kind: k}, true
		}
	}
	take(l.ThreadUSD, s.thread, budgetThread)
	take(l.ChannelDayUSD, s.channelDay, budgetChannel)
	if w.schedRun != nil {
		take(l.ScheduleRunUSD, 0, budgetRun)
	}
	return c, ok
}

// capArgs are the CLI arguments for cap: the amount rounded down to a
// millionth of a dollar, at least that (the gate refused a spent budget
// already; the CLI takes no 0).
func capArgs(c budgetCap) []string {
	v := math.Max(math.Floor(c.usd*1e6)/1e6, 1e-6)
	return []string{"--max-budget-usd", strconv.FormatFloat(v, 'f', -1, 64)}
}

// recap restarts an idle live process whose cap no longer matches what is
// left of its budgets (another thread of the channel spent, the day
// turned), so that the next turn runs under the right one. The session
// resumes: nothing of the conversation is lost.
func (w *worker) recap(ctx context.Context) {
	if !w.sess.live() || !w.cfg.Limits.budgeted() || w.view.running() || len(w.queued) > 0 || w.view.hasTools() || w.desk.hasOpen() {
		return
	}
	want, ok := w.processCap(ctx)
	left := w.sess.cap.usd - w.sess.used
	if ok == w.sess.capped && (!ok || math.Abs(want.usd-left) < 1e-6) {
		return
	}
	w.log.Info("budget left changed since the session started; restarting it with the new cap", "cap", want.usd, "left", left)
	w.stop("")
}

// onBudgetResult: the CLI ended the turn at its cap. It says which budget
// is spent, frees the process (its cap is used up) and returns why.
func (w *worker) onBudgetResult(ctx context.Context, r *claudeproc.Result) string {
	l := w.cfg.Limits
	s, err := w.spendNow(ctx)
	if err != nil {
		w.log.Error("read spend after a budget stop", "err", err)
	}
	k := l.overBudget(s)
	if k == budgetNone {
		// The cap was the run's, or it was what another thread had left
		// of the channel's.
		k = w.sess.cap.kind
	}
	why := l.spentText(k, s, r.TotalCostUSD)
	if !w.sess.capTold {
		// Once per process: a message queued behind the turn that spent
		// the cap is refused by the CLI the same way, at no cost.
		w.sess.capTold = true
		w.notice(ctx, "Stopped: "+why+".", true)
		w.audit(ctx, "bot", "stop", "turn", why, true)
	}
	return why
}

// afterSpend runs once a turn's cost is stored: when the channel is over
// its budget now, its other running turns are stopped.
func (w *worker) afterSpend(ctx context.Context, cost float64) {
	if cost <= 0 || w.cfg.Limits.ChannelDayUSD <= 0 {
		return
	}
	s, err := w.spendNow(ctx)
	if err != nil || s.channelDay < w.cfg.Limits.ChannelDayUSD {
		return
	}
	w.b.channelOverBudget(w.ref.ChannelKey(), w.key)
}

// channelOverBudget tells the workers of the channel's other threads that
// its budget is spent.
func (b *Bot) channelOverBudget(channel string, except adapters.ThreadKey) {
	b.mu.Lock()
	var keys []adapters.ThreadKey
	for k, w := range b.workers {
		if k != except && w.ref.ChannelKey() == channel {
			keys = append(keys, k)
		}
	}
	b.mu.Unlock()
	for _, k := range keys {
		b.toWorker(k, input{kind: inBudget})
	}
}

// onChannelOverBudget: another thread's turn spent the channel's budget.
// A turn running here is stopped (after checking: the day may have turned).
func (w *worker) onChannelOverBudget(ctx context.Context) {
	if !w.view.running() || !w.sess.live() || w.clock.grace != "" {
		return
	}
	s, err := w.spendNow(ctx)
	if err != nil || s.channelDay < w.cfg.Limits.ChannelDayUSD {
		return
	}
	why := w.cfg.Limits.spentText(budgetChannel, s, 0)
	w.notice(ctx, "Stopped: "+why+".", true)
	w.audit(ctx, "bot", "stop", "turn", why, true)
	w.interruptTurn(ctx, why)
}

// budgetLine is what status and cost say of a budget: "" when none is set.
func budgetLine(budget, used float64) string {
	if budget <= 0 {
		return ""
	}
	if used >= budget {
		return fmt.Sprintf(" · budget %s: spent", usd(budget))
	}
	return fmt.Sprintf(" · budget %s: %s left", usd(budget), spent(budget-used))
}

// runBudgetLine is what cost says of the scheduled runs' budget.
func runBudgetLine(l Limits) string {
	if l.ScheduleRunUSD <= 0 {
		return ""
	}
	return "\nEach scheduled run: budget " + usd(l.ScheduleRunUSD)
}

// channelBudgetLines are status's lines about the channel's budget: its
// spend today against it, when one is set.
func (w *worker) channelBudgetLines(ctx context.Context) []string {
	l := w.cfg.Limits
	if l.ChannelDayUSD <= 0 {
		return nil
	}
	c, err := w.store.ChannelUsageSince(ctx, w.ref.ChannelKey(), dayStart(w.now()))
	if err != nil {
		w.log.Error("channel usage", "err", err)
		return []string{"This channel today (UTC): spend unknown (" + err.Error() + ")"}
	}
	return []string{fmt.Sprintf("This channel today (UTC): %s", spent(c.CostUSD)) + budgetLine(l.ChannelDayUSD, c.CostUSD)}
}

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
