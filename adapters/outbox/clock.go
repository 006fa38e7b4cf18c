package outbox

import "time"

// Clock is the time the Editor and Registry go by; tests pass a fake one.
type Clock interface {
	Now() time.Time
	// After delivers once d has passed.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// NowClock is a Clock whose Now is given (an adapter's Config.Now) and
// whose timers are real.
type NowClock func() time.Time

// Now implements Clock.
func (f NowClock) Now() time.Time { return f() }

// After implements Clock.
func (NowClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
