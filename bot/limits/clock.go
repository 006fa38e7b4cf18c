package limits

import (
	"context"
	"time"

	"github.com/claudeops/claudeops/bot/internal/text"
)

// clock measures the running turn against Config.TurnTimeout. It runs
// only while the turn works: while a prompt of the thread waits for a
// person the clock is paused; once the decision is made it goes on from
// where it stopped.
//
// When the clock fires, the turn is interrupted and the clock gives the
// process the stop grace to end it (graceFor); a turn still running when
// that fires is ended by closing the process.
//
// Its timer posts into the thread (thread.Thread.Post), so that the firing
// is handled on the worker like everything else; gen names the armed
// timer, and a firing of an older one is ignored.
type clock struct {
	turn  int           // the turn timed (thread.State.Turn); 0: none
	used  time.Duration // worked before the current stretch
	since time.Time     // start of the current stretch; zero while paused
	// grace is set once the turn was interrupted for a limit: why, and
	// the clock now times the stop grace.
	grace string
	stop  func() bool // the armed timer's; nil: none
	gen   int
}

// clockFired is the clock's timer firing, posted into the thread.
type clockFired struct{ gen int }

func (c *clock) arm(p *part, d time.Duration) {
	c.disarm()
	gen, t := c.gen, p.t
	c.stop = p.cfg.Timers.AfterFunc(d, func() { t.Post(clockFired{gen}) })
}

// disarm stops the timer; a firing already posted no longer counts.
func (c *clock) disarm() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	c.gen++
}

// graceFor: turn was interrupted for why; it has d to end.
func (c *clock) graceFor(p *part, turn int, why string, d time.Duration) {
	if turn == 0 || c.turn != turn {
		return
	}
	c.grace = why
	c.arm(p, d)
}

// sync brings the clock to the thread's state: turn the running turn (0:
// none), waiting whether a prompt waits for a person.
func (c *clock) sync(p *part, turn int, waiting bool) {
	if turn != c.turn {
		c.disarm()
		*c = clock{gen: c.gen, turn: turn}
	}
	if turn == 0 || c.grace != "" {
		return
	}
	switch now := p.t.Now(); {
	case waiting && !c.since.IsZero():
		c.used += now.Sub(c.since)
		c.since = time.Time{}
		c.disarm()
	case !waiting && c.since.IsZero():
		c.since = now
		c.arm(p, max(p.cfg.TurnTimeout-c.used, 0))
	}
}

// onClock: the running turn's time is up, or the stop grace it was given
// after its interrupt.
func (p *part) onClock(ctx context.Context, m clockFired) {
	c := &p.clock
	if m.gen != c.gen || c.turn == 0 || c.turn != p.t.State().Turn {
		return
	}
	c.stop = nil
	if c.grace != "" {
		p.t.Log().Warn("turn still running after its interrupt; closing the process", "why", c.grace, "grace", p.t.Settings().StopGrace)
		p.t.Stop(c.grace)
		return
	}
	limit := p.cfg.TurnTimeout
	why := "the turn ran longer than " + text.Duration(limit) + " (" + envTurnTimeout + ")"
	p.t.Log().Info("turn timed out", "limit", limit)
	p.t.Notice(ctx, "Stopped: "+why+".", true)
	p.t.Audit(ctx, "bot", "stop", "turn", why, true)
	p.interruptTurn(ctx, why)
}
