package testkit

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// Clock is a clock the test moves. A clock from NewClock stands still
// between calls of Advance; one from RunningClock goes with the wall clock
// and Advance puts it ahead. Its timers (After, AfterFunc) fire only when
// Advance reaches them, never by the wall clock moving: a test decides
// when a deadline passes. Safe for use by any goroutine.
type Clock struct {
	mu      sync.Mutex
	start   time.Time // zero: the wall clock
	off     time.Duration
	timers  []*timer
	changed chan struct{} // closed and replaced when timers change
}

type timer struct {
	at   time.Time
	fire func(time.Time)
}

// NewClock is a clock standing at start.
func NewClock(start time.Time) *Clock {
	return &Clock{start: start, changed: make(chan struct{})}
}

// RunningClock is the wall clock, put ahead by what Advance adds.
func RunningClock() *Clock { return &Clock{changed: make(chan struct{})} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	if c.start.IsZero() {
		return time.Now().Add(c.off)
	}
	return c.start.Add(c.off)
}

// Advance moves the clock on by d and fires the timers due by then, in
// the order of their deadlines.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	now := c.nowLocked()
	var due []*timer
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(now) {
			kept = append(kept, t)
		} else {
			due = append(due, t)
		}
	}
	clear(c.timers[len(kept):])
	c.timers = kept
	c.signalLocked()
	c.mu.Unlock()
	sortTimers(due)
	for _, t := range due {
		t.fire(now)
	}
}

// After delivers the clock's time once Advance has moved it d on.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.add(d, func(now time.Time) { ch <- now })
	return ch
}

// AfterFunc calls f on a goroutine of its own once Advance has moved the
// clock d on (at once for d <= 0, as time.AfterFunc does). stop cancels
// it, reporting whether it was still to fire.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	return c.add(d, func(time.Time) { go f() })
}

func (c *Clock) add(d time.Duration, fire func(time.Time)) (stop func() bool) {
	c.mu.Lock()
	now := c.nowLocked()
	if d <= 0 {
		c.mu.Unlock()
		fire(now)
		return func() bool { return false }
	}
	t := &timer{at: now.Add(d), fire: fire}
	c.timers = append(c.timers, t)
	c.signalLocked()
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.timers {
			if x == t {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				c.signalLocked()
				return true
			}
		}
		return false
	}
}

// Timers are the deadlines of the timers still to fire, as durations from
// now, soonest first.
func (c *Clock) Timers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowLocked()
	ts := append([]*timer(nil), c.timers...)
	sortTimers(ts)
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.at.Sub(now)
	}
	return out
}

// Changed is closed when a timer is next set, stopped or fired.
func (c *Clock) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

func (c *Clock) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func sortTimers(ts []*timer) {
	slices.SortStableFunc(ts, func(a, b *timer) int { return a.at.Compare(b.at) })
}

// WaitTimers waits until exactly n timers are still to fire (a part of
// the code under test has set, or stopped, its own) and returns their
// deadlines; it fails t after Long.
func (c *Clock) WaitTimers(t testing.TB, n int) []time.Duration {
	t.Helper()
	deadline := time.NewTimer(Long)
	defer deadline.Stop()
	for {
		changed := c.Changed()
		if ts := c.Timers(); len(ts) == n {
			return ts
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the clock has timers at %v, want %d of them", c.Timers(), n)
		}
	}
}
