package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// killerFunc is a sessionKiller.
type killerFunc func(ctx context.Context) (int, error)

func (f killerFunc) Kill(ctx context.Context) (int, error) { return f(ctx) }

// TestShutdownSignals: the first signal starts the graceful shutdown; a
// second within the window forces the exit, the sessions killed first;
// one after the window only starts the window again; one more while the
// sessions are killed exits at once. The clock is synctest's.
func TestShutdownSignals(t *testing.T) {
	type step struct {
		after time.Duration // since the step before
		sig   os.Signal
	}
	tests := []struct {
		name     string
		steps    []step
		killHang bool // the kill waits out its timeout
		want     []string
	}{
		{"one signal: graceful only", []step{{0, os.Interrupt}}, false,
			[]string{"graceful at 0s"}},
		{"a second within the window forces", []step{{0, os.Interrupt}, {2 * time.Second, os.Interrupt}}, false,
			[]string{"graceful at 0s", "kill at 2s", "exit 130 at 2s"}},
		{"SIGTERM, then Ctrl-C", []step{{0, syscall.SIGTERM}, {time.Second, os.Interrupt}}, false,
			[]string{"graceful at 0s", "kill at 1s", "exit 130 at 1s"}},
		{"a second after the window starts it again", []step{{0, os.Interrupt}, {6 * time.Second, os.Interrupt}}, false,
			[]string{"graceful at 0s", "graceful at 6s"}},
		{"and a third within it forces", []step{{0, os.Interrupt}, {6 * time.Second, os.Interrupt}, {time.Second, os.Interrupt}}, false,
			[]string{"graceful at 0s", "graceful at 6s", "kill at 7s", "exit 130 at 7s"}},
		{"one more while the sessions are killed exits at once", []step{{0, os.Interrupt}, {time.Second, os.Interrupt}, {time.Second, os.Interrupt}}, true,
			[]string{"graceful at 0s", "kill at 1s", "exit 130 at 2s"}},
		{"a kill that hangs is given up", []step{{0, os.Interrupt}, {time.Second, os.Interrupt}}, true,
			[]string{"graceful at 0s", "kill at 1s", "exit 130 at 11s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var (
					mu     sync.Mutex
					got    []string
					exited bool
				)
				add := func(what string) {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, fmt.Sprintf("%s at %s", what, time.Since(start)))
				}
				logs := &lockedBuffer{}
				log := slog.New(slog.NewTextHandler(logs, nil))
				ctx, s, stop := newStopper(t.Context(), log, &bytes.Buffer{}, func(code int) {
					mu.Lock()
					first := !exited // a process exits once
					exited = true
					mu.Unlock()
					if first {
						add(fmt.Sprint("exit ", code))
					}
				})
				defer stop()
				s.running(log, false, killerFunc(func(ctx context.Context) (int, error) {
					add("kill")
					if tt.killHang {
						<-ctx.Done()
						return 1, context.Cause(ctx)
					}
					return 1, nil
				}))
				graceful := 0
				for _, st := range tt.steps {
					time.Sleep(st.after)
					s.sigs <- st.sig
					synctest.Wait()
					if n := strings.Count(logs.String(), "shutting down; press Ctrl-C again within 5s"); n > graceful {
						graceful = n
						add("graceful")
					}
					if ctx.Err() == nil {
						t.Fatal("a signal did not end the run's context")
					}
				}
				time.Sleep(forceKillTimeout)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(got, tt.want) {
					t.Errorf("got %q, want %q; log:\n%s", got, tt.want, logs.String())
				}
			})
		})
	}
}
