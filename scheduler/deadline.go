package scheduler

import (
	"context"
	"errors"
	"time"
)

// Timers start timers: f runs once d has passed, unless stop comes first
// (stop says whether it did).
type Timers interface {
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// runContext is a run's context: it ends timeout after start, with
// context.DeadlineExceeded. The runtime's timer times it unless
// Config.Timers is set; then the deadline is by Config.Now and ends when
// Config.Timers fires (context.WithDeadline takes no other clock).
func (s *Scheduler) runContext(parent context.Context, start time.Time, timeout time.Duration) (context.Context, context.CancelFunc) {
	if s.cfg.Timers == nil {
		return context.WithTimeout(parent, timeout)
	}
	ctx, cancel := context.WithCancelCause(parent)
	stop := s.cfg.Timers.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	return &timedContext{Context: ctx, deadline: start.Add(timeout)},
		func() { stop(); cancel(context.Canceled) }
}

// timedContext ends at a deadline timed by Config.Timers. The runner sees
// it as one of context.WithDeadline's: its Deadline, and DeadlineExceeded
// once that passed. (A context derived from it ends with Canceled, its
// cause DeadlineExceeded.)
type timedContext struct {
	context.Context // cancelled at the deadline, with that cause, or with its parent
	deadline        time.Time
}

func (c *timedContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *timedContext) Err() error {
	if err := c.Context.Err(); err == nil || !errors.Is(context.Cause(c.Context), context.DeadlineExceeded) {
		return err
	}
	return context.DeadlineExceeded
}
