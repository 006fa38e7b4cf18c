package scheduled

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// Triggers is what the triggers commands show: the operator's triggers
// and what their requests came to (cmd connects the triggers file's and
// the store's; nil: no triggers).
type Triggers interface {
	// In are the triggers that start threads in platform/channel.
	In(ctx context.Context, platform, channel string) ([]TriggerState, error)
	// Runs are the named trigger's latest runs, newest first.
	Runs(ctx context.Context, name string, limit int) ([]store.TriggerRun, error)
}

// TriggerState is one trigger and its requests' counts, by outcome.
type TriggerState struct {
	Name, Kind string
	PerHour    int
	Counts     []store.TriggerCount
}

func (e *Extension) triggerCommands() thread.Command {
	return thread.Command{Name: "triggers", Who: thread.Anyone, Usage: []string{"triggers", "triggers runs <name>"},
		Help: "the events that start runs in this channel (the operator's triggers file): each one's last run and what its requests came to; `runs`: its latest runs",
		Max:  2, Run: thread.Bind((*part).cmdTriggers)}
}

// cmdTriggers: triggers | triggers runs <name>.
func (p *part) cmdTriggers(ctx context.Context, _ adapters.Event, args []string) {
	tr := p.ext.cfg.Triggers
	ref := p.t.Ref()
	var here []TriggerState
	if tr != nil {
		var err error
		if here, err = tr.In(ctx, ref.Platform, ref.Channel); err != nil {
			p.t.Reply(ctx, "Could not read the triggers: "+err.Error())
			return
		}
	}
	switch {
	case len(args) == 0:
		p.t.Reply(ctx, triggersText(here))
	case len(args) == 2 && args[0] == "runs":
		i := slices.IndexFunc(here, func(s TriggerState) bool { return s.Name == args[1] })
		if i < 0 {
			p.t.Reply(ctx, fmt.Sprintf("No trigger %q starts threads in this channel.", args[1]))
			return
		}
		runs, err := tr.Runs(ctx, args[1], 10)
		if err != nil {
			p.t.Reply(ctx, "Could not read runs: "+err.Error())
			return
		}
		p.t.Reply(ctx, triggerRunsText(args[1], runs))
	default:
		p.t.Reply(ctx, "Usage: triggers · triggers runs <name>")
	}
}

func triggersText(here []TriggerState) string {
	if len(here) == 0 {
		return "No trigger starts threads in this channel (triggers are the operator's: CLAUDEOPS_TRIGGERS_FILE)."
	}
	lines := []string{"Triggers of this channel:"}
	for _, s := range here {
		last, counts := "never", make([]string, 0, len(s.Counts))
		for _, c := range s.Counts {
			counts = append(counts, fmt.Sprintf("%s %d", c.Outcome, c.N))
			if c.Outcome == "accepted" {
				last = c.LastAt.UTC().Format(time.DateTime + "Z")
			}
		}
		if len(counts) == 0 {
			counts = append(counts, "no requests yet")
		}
		lines = append(lines, fmt.Sprintf("`%s` (%s, at most %d an hour) · last run %s · %s", s.Name, s.Kind, s.PerHour, last, strings.Join(counts, ", ")))
	}
	return strings.Join(lines, "\n")
}

func triggerRunsText(name string, runs []store.TriggerRun) string {
	if len(runs) == 0 {
		return fmt.Sprintf("The trigger %s has not run yet.", name)
	}
	lines := []string{fmt.Sprintf("Runs of the trigger %s (newest first):", name)}
	for _, r := range runs {
		l := fmt.Sprintf("%s · %s", r.StartedAt.UTC().Format(time.DateTime+"Z"), r.Status)
		if !r.EndedAt.IsZero() {
			l += " · " + adapters.FormatDuration(r.EndedAt.Sub(r.StartedAt))
		}
		if r.CostUSD > 0 {
			l += fmt.Sprintf(" · $%.4f", r.CostUSD)
		}
		if r.ThreadKey != "" {
			l += " · thread " + r.ThreadKey
		}
		if r.Error != "" {
			l += " · " + r.Error
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
