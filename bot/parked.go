package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
)

// Parked scheduled requests. A scheduled run with the park policy puts its
// approvals and questions before people instead of denying them; nobody
// may be watching the run's thread, so its creator is notified (a live
// mention where the platform has one), and the request has a deadline of
// its own: the approval timeout, or the run's end, whichever comes first.
// At that deadline it is denied, Claude is told so, and the run goes on
// (or ends, when its time is up).

// parked: a request asked now is a parked scheduled request.
func (w *worker) parked() bool {
	return w.schedRun != nil && w.schedRun.schedule.ApprovalPolicy == "park"
}

// parkedDeadline is when a parked request asked now is denied: zero when
// the request is not parked (the registry's approval timeout applies).
func (w *worker) parkedDeadline() time.Time {
	if !w.parked() {
		return time.Time{}
	}
	d := w.now().Add(w.cfg.ApprovalTimeout)
	if end := w.schedRun.deadline; !end.IsZero() && end.Before(d) {
		d = end
	}
	return d
}

// notifyCreator tells the schedule's creator that its run waits for a
// decision on the prompt ps (the request p).
func (w *worker) notifyCreator(ctx context.Context, ps *promptState, p *approvals.Pending) {
	s := w.schedRun.schedule
	what := "your decision on"
	if p.Question {
		what = "your answer to"
	}
	then := "it is denied and the run goes on"
	if w.endsWithRun(p.ExpiresAt) {
		then = "it is denied as the run's time is up"
	}
	text := fmt.Sprintf("The scheduled run of #%d waits for %s prompt #%d (%s). Unless someone decides within %s, %s.",
		s.ID, what, ps.num, p.Tool, adapters.FormatDuration(p.ExpiresAt.Sub(w.now()).Round(time.Second)), then)
	creator := adapters.User{ID: s.CreatedBy}
	if n, ok := w.opt.(adapters.Notifier); ok {
		_, err := n.Notify(ctx, w.ref, creator, text)
		if err == nil {
			w.audit(ctx, "bot", "notify", s.CreatedBy, fmt.Sprintf("schedule %d prompt #%d", s.ID, ps.num), true)
			return
		}
		w.log.Warn("notify the schedule's creator", "user", s.CreatedBy, "err", err)
	}
	// No live mention here: the notice names the creator all the same.
	w.notice(ctx, "@"+s.CreatedBy+": "+text, false)
}

// expiredParked settles a parked request nobody decided by its deadline:
// Claude is told it was denied, and the thread that the run goes on.
func (w *worker) expiredParked(ctx context.Context, p approvals.Pending) {
	id := w.schedRun.schedule.ID
	if ps := w.desk.get(p.ID); ps != nil {
		msg := fmt.Sprintf("Nobody decided this in time (scheduled run of #%d): it was denied. Go on without it.", id)
		if err := w.sess.deny(ps.requestID, msg); err != nil {
			w.log.Debug("deny expired parked request", "err", err)
		}
	}
	w.settleExpired(ctx, p, "Expired: nobody decided in time; denied.")
	w.audit(ctx, "scheduler", "deny", p.Tool, "parked request expired", true)
	if w.endsWithRun(p.ExpiresAt) {
		w.notice(ctx, fmt.Sprintf("%s was denied: nobody decided before the scheduled run of #%d ran out of time.", p.Tool, id), false)
		return
	}
	w.notice(ctx, fmt.Sprintf("%s was denied: nobody decided by the deadline. The scheduled run of #%d goes on without it.", p.Tool, id), false)
}

// endsWithRun: a parked request's deadline is its run's end.
func (w *worker) endsWithRun(deadline time.Time) bool {
	end := w.schedRun.deadline
	return !end.IsZero() && !deadline.Before(end)
}
