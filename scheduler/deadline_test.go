package scheduler

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/store"
)

// TestRunTimeoutOnTimers: with Config.Timers a run's time is up when they
// fire, however long the runtime's clock runs: the runner sees its
// deadline by Config.Now, and DeadlineExceeded once it has passed. The
// scheduler's end ends the run as before.
func TestRunTimeoutOnTimers(t *testing.T) {
	const timeout = 5 * time.Minute
	tests := []struct {
		name   string
		end    func(clk *testkit.Clock, stop func())
		status store.RunStatus
		errIs  error // the runner's context's Err and Cause
		error  string
	}{
		{"its time is up", func(clk *testkit.Clock, _ func()) { clk.Advance(timeout) },
			store.RunTimedOut, context.DeadlineExceeded, "timed out after 5m0s: context deadline exceeded"},
		{"the scheduler stops first", func(_ *testkit.Clock, stop func()) { stop() },
			store.RunInterrupted, context.Canceled, "scheduler stopped: context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := openStore(t, filepath.Join(t.TempDir(), "db"))
				clk := testkit.NewClock(time.Now())
				type seen struct {
					deadline   time.Time
					err, cause error
				}
				got := make(chan seen, 1)
				r := &fakeRunner{fn: func(ctx context.Context, _ int, _ Schedule, _ time.Time) (Run, error) {
					d, _ := ctx.Deadline()
					<-ctx.Done()
					got <- seen{d, ctx.Err(), context.Cause(ctx)}
					return Run{}, ctx.Err()
				}}
				s, stop := start(t, st, r, Config{Now: clk.Now, Timers: clk})
				sc, err := s.Add(t.Context(), Schedule{Spec: "@daily", Timeout: timeout})
				if err != nil {
					t.Fatal(err)
				}
				started := clk.Now()
				if _, err := s.RunNow(t.Context(), sc.ID); err != nil {
					t.Fatal(err)
				}
				// The runtime's clock passes the timeout: the run goes on.
				time.Sleep(2 * timeout)
				synctest.Wait()
				if n := len(got); n != 0 {
					t.Fatal("the run ended by the runtime's clock")
				}
				tt.end(clk, stop)
				ended := <-got
				synctest.Wait() // the run recorded
				stop()
				if want := started.Add(timeout); !ended.deadline.Equal(want) {
					t.Errorf("the runner's deadline is %v, want %v", ended.deadline, want)
				}
				if !errors.Is(ended.err, tt.errIs) || !errors.Is(ended.cause, tt.errIs) {
					t.Errorf("the runner's context ended with %v (cause %v), want %v", ended.err, ended.cause, tt.errIs)
				}
				rs := runs(t, st, sc.ID)
				if len(rs) != 1 || rs[0].Status != tt.status || !strings.Contains(rs[0].Error, tt.error) {
					t.Errorf("runs: %+v; want one %s (%q)", rs, tt.status, tt.error)
				}
			})
		})
	}
}
