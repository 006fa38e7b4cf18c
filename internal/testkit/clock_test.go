package testkit

import (
	"slices"
	"testing"
	"time"
)

// The clock's timers fire when Advance reaches them, in deadline order,
// and not before; a stopped one never does.
func TestClockTimers(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		set     []time.Duration // AfterFunc deadlines, named by index
		stop    []int           // stopped before the advance
		advance time.Duration
		fired   []int
		left    []time.Duration
	}{
		{"nothing due", []time.Duration{time.Second}, nil, time.Second - 1, nil, []time.Duration{1}},
		{"due in order", []time.Duration{3 * time.Second, time.Second, 2 * time.Second}, nil, 2 * time.Second, []int{1, 2}, []time.Duration{time.Second}},
		{"stopped", []time.Duration{time.Second, time.Second}, []int{0}, time.Minute, []int{1}, []time.Duration{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClock(start)
			fired := make(chan int, len(tt.set))
			stops := make([]func() bool, len(tt.set))
			for i, d := range tt.set {
				c.After(0) // due at once: never held
				stops[i] = c.AfterFunc(d, func() { fired <- i })
			}
			for _, i := range tt.stop {
				if !stops[i]() {
					t.Errorf("timer %d: stop said it had fired", i)
				}
			}
			c.Advance(tt.advance)
			if got := c.Now(); !got.Equal(start.Add(tt.advance)) {
				t.Errorf("now %v, want %v", got, start.Add(tt.advance))
			}
			var got []int
			for range tt.fired {
				got = append(got, <-fired)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.fired))
			if !slices.Equal(got, want) {
				t.Errorf("fired %v, want %v", got, want)
			}
			if left := c.WaitTimers(t, len(tt.left)); !slices.Equal(left, tt.left) {
				t.Errorf("left %v, want %v", left, tt.left)
			}
		})
	}
}

// A running clock goes with the wall clock, ahead by what was added.
func TestRunningClock(t *testing.T) {
	c := RunningClock()
	c.Advance(time.Hour)
	if d := time.Until(c.Now()); d < 59*time.Minute || d > time.Hour {
		t.Errorf("a running clock advanced by 1h is %s ahead", d)
	}
}
