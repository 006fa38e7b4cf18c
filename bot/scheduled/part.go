package scheduled

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// part is the extension's part in one thread: the run it is doing, if
// any. Its hooks run on the thread's worker.
type part struct {
	ext *Extension
	t   thread.Thread
	run *run
}

var (
	_ thread.Receiver  = (*part)(nil)
	_ thread.Asks      = (*part)(nil)
	_ thread.TurnEnder = (*part)(nil)
	_ thread.Exiter    = (*part)(nil)
)

// Receive takes the run to begin, and the end of its time.
func (p *part) Receive(ctx context.Context, msg any) {
	switch m := msg.(type) {
	case startRun:
		p.start(ctx, m.run)
	case stopRun:
		p.stop(ctx)
	}
}

// start begins an unattended run in this (new) thread.
func (p *part) start(ctx context.Context, r *run) {
	p.run = r
	var refused *thread.Refused
	switch err := p.t.BeginRun(ctx, r.what, r.prompt); {
	case errors.As(err, &refused):
		p.finish(outcome{err: errors.New("not run: " + refused.Why)})
	case err != nil:
		// Not sent (the thread was told why).
		p.finish(outcome{err: err})
	}
}

// stop: the scheduled run's time is up; its turn is interrupted.
func (p *part) stop(ctx context.Context) {
	if s := p.t.State(); p.run != nil && s.Live && s.Turn != 0 {
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := p.t.Interrupt(ictx); err != nil {
			p.t.Log().Warn("interrupt scheduled run", "err", err)
		}
		cancel()
		p.t.Notice(ctx, "This scheduled run took longer than its timeout and was stopped.", true)
	}
	p.finish(outcome{err: context.DeadlineExceeded})
}

// finish reports the run's end, once.
func (p *part) finish(out outcome) {
	if p.run == nil {
		return
	}
	p.run.done <- out
	p.run = nil
	p.t.EndRun()
}

// AfterTurn reports the run's turn as its record, and frees the process
// unless people wrote in the thread while the run went on (the CLI holds
// their messages and answers them next; a reply resumes the session).
func (p *part) AfterTurn(_ context.Context, e *thread.TurnEnd) {
	if p.run == nil {
		return
	}
	r := e.Result
	p.finish(outcome{err: e.Err, res: store.ScheduleRun{
		SessionID: r.SessionID, Result: r.Result, CostUSD: e.Cost, InputTokens: e.InputTokens, OutputTokens: e.OutputTokens,
		NumTurns: r.NumTurns, Branch: e.Branch, Commit: e.Commit, PR: e.PR,
	}})
	if p.t.State().Queued == 0 {
		e.Release = true
	}
}

// OnExit: the process ended under the run.
func (p *part) OnExit(_ context.Context, reason string) {
	p.finish(outcome{err: errors.New("Claude Code stopped: " + reason)})
}

// BeforeAsk: nobody is asked during an unattended run (only allow rules
// let tools through); a parked one's prompt has a deadline of its own.
func (p *part) BeforeAsk(ctx context.Context, a *thread.Ask) {
	if p.run == nil {
		return
	}
	w := p.run.what
	if w.Trigger == "" && p.parked() {
		// A trigger's run is never parked: its sender is nobody to ask.
		a.Deadline = p.parkedDeadline()
		return
	}
	what, short, actor, hint := fmt.Sprintf("scheduled run (schedule %d)", w.Schedule.ID), "scheduled run", "scheduler", " or to set the schedule to park requests"
	if w.Trigger != "" {
		what, short, actor, hint = "run started by the trigger "+w.Trigger+" (an outside event)", "run of the trigger "+w.Trigger, "trigger", ""
	}
	a.Deny = fmt.Sprintf("This is an unattended %s: only the channel's allow rules apply, and %s is not allowed by any. Ask an admin to add a rule (rules add allow %s(…))%s.", what, a.Tool, a.Tool, hint)
	p.t.Audit(ctx, actor, "deny", a.Tool, "unattended run", true)
	p.t.Notice(ctx, fmt.Sprintf("%s was denied: unattended %s, and no allow rule covers it.", a.Tool, short), false)
}
