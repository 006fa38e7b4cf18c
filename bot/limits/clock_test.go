package limits

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/bot/thread/threadtest"
)

// step is one moment of a thread the clock watches: time passes, then the
// thread is in this state.
type step struct {
	wait    time.Duration
	turn    int // the running turn (0: none)
	prompts int // prompts waiting for a person
}

func TestClock(t *testing.T) {
	const why = "the turn ran longer than 1h (CLAUDEOPS_TURN_TIMEOUT)"
	tests := []struct {
		name       string
		steps      []step
		interrupt  error
		said       []string
		interrupts int
		stops      []string
	}{
		{name: "a turn within its time", steps: []step{{0, 1, 0}, {59 * time.Minute, 1, 0}, {59 * time.Second, 0, 0}, {2 * time.Hour, 0, 0}}},
		{name: "a turn over its time is interrupted, then closed after the grace",
			steps: []step{{0, 1, 0}, {time.Hour, 1, 0}, {time.Second, 1, 0}},
			said:  []string{"!Stopped: " + why + "."}, interrupts: 1, stops: []string{why}},
		{name: "an interrupted turn that ends within the grace is not closed",
			steps: []step{{0, 1, 0}, {time.Hour, 1, 0}, {0, 0, 0}, {time.Minute, 0, 0}},
			said:  []string{"!Stopped: " + why + "."}, interrupts: 1},
		{name: "the wait for a person does not count",
			steps: []step{{0, 1, 0}, {40 * time.Minute, 1, 1}, {3 * time.Hour, 1, 0}, {19 * time.Minute, 1, 0}}},
		{name: "the clock goes on after the decision",
			steps: []step{{0, 1, 0}, {40 * time.Minute, 1, 1}, {3 * time.Hour, 1, 0}, {20 * time.Minute, 1, 0}},
			said:  []string{"!Stopped: " + why + "."}, interrupts: 1},
		{name: "each turn has its own time",
			steps: []step{{0, 1, 0}, {50 * time.Minute, 2, 0}, {50 * time.Minute, 2, 0}}},
		{name: "a process that does not take the interrupt is closed at once",
			steps: []step{{0, 1, 0}, {time.Hour, 1, 0}}, interrupt: errors.New("no answer"),
			said: []string{"!Stopped: " + why + "."}, interrupts: 1, stops: []string{why}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				ft := threadtest.New("main", "alice")
				ft.InterruptErr = tt.interrupt
				p := New(Config{}).Attach(ft)
				for _, s := range tt.steps {
					time.Sleep(s.wait)
					synctest.Wait()
					ft.Step(ctx, p) // what fired while time passed
					ft.Current.Turn, ft.Current.Prompts, ft.Current.Live = s.turn, s.prompts, s.turn != 0
					ft.Step(ctx, p)
				}
				if !slices.Equal(ft.Said, tt.said) {
					t.Errorf("said %q, want %q", ft.Said, tt.said)
				}
				if ft.Interrupts != tt.interrupts {
					t.Errorf("%d interrupts, want %d", ft.Interrupts, tt.interrupts)
				}
				if !slices.Equal(ft.Stops, tt.stops) {
					t.Errorf("stopped %q, want %q", ft.Stops, tt.stops)
				}
				if tt.interrupts > 0 && tt.interrupt == nil && !slices.Equal(ft.Cancelled, []string{why}) {
					t.Errorf("prompts cancelled for %q, want %q", ft.Cancelled, why)
				}
			})
		})
	}
}
