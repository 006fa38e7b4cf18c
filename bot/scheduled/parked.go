package scheduled

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
)

// Parked scheduled requests. A scheduled run with the park policy puts its
// approvals and questions before people instead of denying them; nobody
// may be watching the run's thread, so its creator is notified (a live
// mention where the platform has one), and the request has a deadline of
// its own: the approval timeout, or the run's end, whichever comes first.
// At that deadline it is denied, Claude is told so, and the run goes on
// (or ends, when its time is up).

// parked: a request asked now is a parked scheduled request.
func (p *part) parked() bool {
	return p.run != nil && p.run.what.Schedule.ApprovalPolicy == "park"
}

// parkedDeadline is when a parked request asked now is denied.
func (p *part) parkedDeadline() time.Time {
	d := p.t.Now().Add(p.t.Settings().ApprovalTimeout)
	if end := p.run.deadline; !end.IsZero() && end.Before(d) {
		d = end
	}
	return d
}

// Asked tells the schedule's creator that the run waits for a decision on
// the prompt a.
func (p *part) Asked(ctx context.Context, a thread.Asked) {
	if !p.parked() {
		return
	}
	s := p.run.what.Schedule
	what := "your decision on"
	if a.Question {
		what = "your answer to"
	}
	then := "it is denied and the run goes on"
	if p.endsWithRun(a.Expires) {
		then = "it is denied as the run's time is up"
	}
	text := fmt.Sprintf("The scheduled run of #%d waits for %s prompt #%d (%s). Unless someone decides within %s, %s.",
		s.ID, what, a.Num, a.Tool, adapters.FormatDuration(a.Expires.Sub(p.t.Now()).Round(time.Second)), then)
	creator := adapters.User{ID: s.CreatedBy}
	err := p.t.Notify(ctx, creator, text)
	if err == nil {
		p.t.Audit(ctx, "bot", "notify", s.CreatedBy, fmt.Sprintf("schedule %d prompt #%d", s.ID, a.Num), true)
		return
	}
	if !errors.Is(err, thread.ErrNoNotifier) {
		p.t.Log().Warn("notify the schedule's creator", "user", s.CreatedBy, "err", err)
	}
	// No live mention here: the notice names the creator all the same.
	p.t.Notice(ctx, "@"+s.CreatedBy+": "+text, false)
}

// Expired settles a parked request nobody decided by its deadline: Claude
// is told it was denied, and the thread that the run goes on.
func (p *part) Expired(ctx context.Context, e *thread.Expiry) {
	if !p.parked() {
		return
	}
	id := p.run.what.Schedule.ID
	e.Tell = fmt.Sprintf("Nobody decided this in time (scheduled run of #%d): it was denied. Go on without it.", id)
	e.Outcome = "Expired: nobody decided in time; denied."
	p.t.Audit(ctx, "scheduler", "deny", e.Tool, "parked request expired", true)
	if p.endsWithRun(e.Expires) {
		e.Notice = fmt.Sprintf("%s was denied: nobody decided before the scheduled run of #%d ran out of time.", e.Tool, id)
		return
	}
	e.Notice = fmt.Sprintf("%s was denied: nobody decided by the deadline. The scheduled run of #%d goes on without it.", e.Tool, id)
}

// endsWithRun: a parked request's deadline is its run's end.
func (p *part) endsWithRun(deadline time.Time) bool {
	end := p.run.deadline
	return !end.IsZero() && !deadline.Before(end)
}
