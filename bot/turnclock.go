package bot

import (
	"context"
	"time"
)

// turnClock measures the running turn against Limits.TurnTimeout. It runs
// only while the turn works: while a prompt of the thread waits for a
// person the clock is paused. That wait has its own deadline (the
// approval timeout, or a parked scheduled request's), and a person who
// decides within it must not find the turn killed under them; once the
// decision is made, the clock goes on from where it stopped.
//
// When the clock fires, the worker interrupts the turn and the clock
// gives the process the stop grace to end it (graceFor); a turn still
// running when that fires is ended by closing the process.
type turnClock struct {
	turn  *turn
	used  time.Duration // worked before the current stretch
	since time.Time     // start of the current stretch; zero while paused
	// grace is set once the turn was interrupted for a limit: why, and
	// the clock now times the stop grace.
	grace string
	timer *time.Timer
	// C fires when the turn's time, or its stop grace, is up; nil when
	// nothing is timed.
	C <-chan time.Time
}

func (c *turnClock) arm(d time.Duration) {
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	c.C = c.timer.C
}

func (c *turnClock) disarm() {
	if c.timer != nil {
		c.timer.Stop() // Go ≥ 1.23: no stale tick is delivered after Stop
	}
	c.C = nil
}

// graceFor: turn t was interrupted for why; it has d to end.
func (c *turnClock) graceFor(t *turn, why string, d time.Duration) {
	if t == nil || c.turn != t {
		return
	}
	c.grace = why
	c.arm(d)
}

// sync brings the clock to the thread's state: t the running turn (nil:
// none), waiting whether a prompt waits for a person.
func (c *turnClock) sync(now time.Time, limit time.Duration, t *turn, waiting bool) {
	if t != c.turn {
		c.disarm()
		*c = turnClock{timer: c.timer, turn: t}
	}
	if t == nil || c.grace != "" {
		return
	}
	switch {
	case waiting && !c.since.IsZero():
		c.used += now.Sub(c.since)
		c.since = time.Time{}
		c.disarm()
	case !waiting && c.since.IsZero():
		c.since = now
		c.arm(max(limit-c.used, 0))
	}
}

// syncClock runs after everything the worker handles.
func (w *worker) syncClock() {
	w.clock.sync(w.now(), w.cfg.Limits.TurnTimeout, w.view.turn, w.desk.hasOpen())
}

// onTurnClock: the running turn's time is up, or the stop grace it was
// given after its interrupt.
func (w *worker) onTurnClock(ctx context.Context) {
	c := &w.clock
	c.C = nil
	if c.turn == nil || c.turn != w.view.turn {
		return
	}
	if c.grace != "" {
		w.log.Warn("turn still running after its interrupt; closing the process", "why", c.grace, "grace", w.cfg.StopGrace)
		w.stop(c.grace)
		return
	}
	limit := w.cfg.Limits.TurnTimeout
	why := "the turn ran longer than " + formatLimit(limit) + " (" + envTurnTimeout + ")"
	w.log.Info("turn timed out", "limit", limit)
	w.notice(ctx, "Stopped: "+why+".", true)
	w.audit(ctx, "bot", "stop", "turn", why, true)
	w.interruptTurn(ctx, why)
}
