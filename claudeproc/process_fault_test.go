package claudeproc

// Fault tests against the fake CLI of fakeclaude_test.go: what the real CLI
// cannot be made to do on demand (crash, flood stderr, ignore SIGTERM, leave
// processes behind, never answer, print garbage).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/claudeops/claudeops/internal/testkit"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// fakeGrace is the StopGrace of most fault tests: short, to keep them
	// fast.
	fakeGrace = 300 * time.Millisecond
	// evTimeout bounds every wait for an event; generous for -race on a
	// loaded machine, it only matters when something hangs.
	evTimeout = 15 * time.Second
)

// startFake starts the fake CLI in mode through Start, and arranges for it
// to be closed and its events drained when the test ends.
func startFake(t *testing.T, mode string, opts Options) *Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Bin = exe
	opts.Env = append(BuildEnv(os.Environ(), nil), fakeEnv+"="+mode,
		// A -race fake would sleep 1 s in exit(0) (atexit_sleep_ms),
		// which looks like a CLI slow to exit.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	if opts.StopGrace == 0 {
		opts.StopGrace = fakeGrace
	}
	p, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), evTimeout)
		defer cancel()
		p.Close(ctx)
		drainEvents(t, p)
	})
	return p
}

// drainEvents reads events until the channel is closed.
func drainEvents(t *testing.T, p *Process) {
	t.Helper()
	timer := time.NewTimer(evTimeout)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-p.Events():
			if !ok {
				return
			}
		case <-timer.C:
			t.Errorf("events channel not closed %s after the end", evTimeout)
			return
		}
	}
}

// nextEvent returns the next event; it fails if none comes in time or the
// channel is closed.
func nextEvent(t *testing.T, p *Process) Event {
	t.Helper()
	select {
	case ev, ok := <-p.Events():
		if !ok {
			t.Fatal("events channel closed early")
		}
		return ev
	case <-time.After(evTimeout):
		t.Fatalf("no event within %s", evTimeout)
	}
	return nil
}

// expectNext returns the next event, which must be a T.
func expectNext[T Event](t *testing.T, p *Process) T {
	t.Helper()
	ev := nextEvent(t, p)
	e, ok := ev.(T)
	if !ok {
		t.Fatalf("next event is %s (%T), want %T", ev.Kind(), ev, e)
	}
	return e
}

// waitEvent skips events until a T for which pred (if any) holds.
func waitEvent[T Event](t *testing.T, p *Process, timeout time.Duration, pred func(T) bool) T {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var skipped []string
	for {
		select {
		case ev, ok := <-p.Events():
			if !ok {
				var zero T
				t.Fatalf("events channel closed while waiting for %T; skipped %v", zero, skipped)
			}
			if e, ok := ev.(T); ok && (pred == nil || pred(e)) {
				return e
			}
			skipped = append(skipped, ev.Kind())
		case <-timer.C:
			var zero T
			t.Fatalf("no %T within %s; skipped %v", zero, timeout, skipped)
		}
	}
}

// expectClosed checks that the events channel is closed now (after Exited).
func expectClosed(t *testing.T, p *Process) {
	t.Helper()
	select {
	case ev, ok := <-p.Events():
		if ok {
			t.Fatalf("event %s after Exited", ev.Kind())
		}
	case <-time.After(evTimeout):
		t.Fatal("events channel not closed after Exited")
	}
}

func closeWithin(t *testing.T, p *Process) (ExitInfo, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), evTimeout)
	defer cancel()
	start := time.Now()
	info := p.Close(ctx)
	return info, time.Since(start)
}

func fakeLinePID(t *testing.T, u *Unknown) int {
	t.Helper()
	var v struct{ PID int }
	if err := json.Unmarshal(u.Raw, &v); err != nil || v.PID <= 0 {
		t.Fatalf("bad fake_grandchild line %s: %v", u.Raw, err)
	}
	return v.PID
}

// brief formats an ExitInfo for messages, with only the end of its stderr.
func brief(i ExitInfo) string {
	return fmt.Sprintf("{Code:%d Signal:%q Reason:%q Err:%v StderrTail:…%q}", i.Code, i.Signal, i.Reason, i.Err, lastN(i.StderrTail))
}

func lastN(s string) string { return s[max(0, len(s)-300):] }

// processGone reports whether pid no longer runs: it does not exist, or it
// is a zombie (dead; its new parent has not reaped it yet).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// waitGone polls until pid is gone. Polling is the only way: the process is
// not our child, so there is nothing to wait on.
func waitGone(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	testkit.WaitForf(t, timeout, func() bool { return processGone(pid) }, func() string {
		return fmt.Sprintf("process %d still alive after the fake ended", pid)
	})
}

// killSleepAtEnd kills pid when the test ends if it is still the `sleep`
// the fake started, so no test leaves an orphan behind.
func killSleepAtEnd(t *testing.T, pid int) {
	t.Cleanup(func() {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && strings.TrimSpace(string(comm)) == "sleep" && !processGone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

func TestFaultCrashMidTurn(t *testing.T) {
	tests := []struct {
		name       string
		mode       string
		interrupt  bool // an Interrupt is in flight when it dies
		wantCode   int
		wantSignal string
		wantReason string
		wantStderr string
	}{
		{"exit 3 with interrupt in flight", fakeCrashExit, true, 3, "", "exited with code 3", "crashing without an answer"},
		{"SIGKILL with interrupt in flight", fakeCrashKill, true, -1, "SIGKILL", "killed by SIGKILL", "crashing without an answer"},
		{"exit 3 on its own", fakeCrashNow, false, 3, "", "exited with code 3", "crashing mid-turn with code 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A long RequestTimeout: the in-flight request must end because
			// the process is gone, not time out.
			p := startFake(t, tt.mode, Options{RequestTimeout: time.Minute})
			if err := p.SendText("hello"); err != nil {
				t.Fatal(err)
			}
			expectNext[*SystemInit](t, p)
			if se := expectNext[*StreamEvent](t, p); se.Delta != "working on hello" {
				t.Fatalf("stream delta %q", se.Delta)
			}
			if tt.interrupt {
				errc := make(chan error, 1)
				go func() {
					_, err := p.Interrupt(context.Background(), false)
					errc <- err
				}()
				select {
				case err := <-errc:
					if !errors.Is(err, ErrExited) || errors.Is(err, ErrTimeout) {
						t.Fatalf("Interrupt in flight at the crash: %v, want ErrExited", err)
					}
				case <-time.After(evTimeout):
					t.Fatal("Interrupt in flight still blocked after the crash")
				}
			}
			ex := expectNext[*Exited](t, p)
			if !ex.MidTurn {
				t.Error("Exited.MidTurn = false, want true")
			}
			info := ex.Info
			if info.Code != tt.wantCode || info.Signal != tt.wantSignal || info.Reason != tt.wantReason || info.Err != nil {
				t.Errorf("exit info %s, want code %d signal %q reason %q", brief(info), tt.wantCode, tt.wantSignal, tt.wantReason)
			}
			if !strings.Contains(info.StderrTail, tt.wantStderr) {
				t.Errorf("StderrTail …%q lacks %q", lastN(info.StderrTail), tt.wantStderr)
			}
			expectClosed(t, p)
			if got := p.ExitInfo(); got != info {
				t.Errorf("ExitInfo() %s differs from the event's %s", brief(got), brief(info))
			}

			if err := p.SendText("after"); !errors.Is(err, ErrExited) {
				t.Errorf("Send after exit: %v, want ErrExited", err)
			}
			if _, err := p.SetModel(context.Background(), "opus"); !errors.Is(err, ErrExited) {
				t.Errorf("SetModel after exit: %v, want ErrExited", err)
			}
			if _, err := p.Interrupt(context.Background(), true); !errors.Is(err, ErrExited) {
				t.Errorf("Interrupt after exit: %v, want ErrExited", err)
			}
			if err := p.Allow("req_1", nil, nil); !errors.Is(err, ErrExited) {
				t.Errorf("Allow after exit: %v, want ErrExited", err)
			}
			// Close and Kill after the fact return at once and change nothing
			// (Kill no longer signals the group id of a reaped process).
			if got, d := closeWithin(t, p); got != info || d > time.Second {
				t.Errorf("Close after exit took %s and returned %s", d, brief(got))
			}
			p.Kill()
			if got := p.ExitInfo(); got != info {
				t.Errorf("ExitInfo() after Kill %s, want %s", brief(got), brief(info))
			}
		})
	}
}

// TestFaultRequestsRacingCrash: requests written while the process dies fail
// with ErrExited, whether they were answered, in flight, or written into the
// dead process's pipe before it was reaped.
func TestFaultRequestsRacingCrash(t *testing.T) {
	for iter := range 10 {
		p := startFake(t, fakeCrashExit, Options{RequestTimeout: time.Minute})
		if err := p.SendText("hello"); err != nil {
			t.Fatal(err)
		}
		expectNext[*SystemInit](t, p)
		expectNext[*StreamEvent](t, p)
		const workers = 8
		errc := make(chan error, workers)
		for range workers {
			go func() {
				for {
					if _, err := p.SetModel(context.Background(), "m"); err != nil {
						errc <- err
						return
					}
				}
			}()
		}
		if _, err := p.Interrupt(context.Background(), false); !errors.Is(err, ErrExited) {
			t.Errorf("iteration %d: Interrupt: %v, want ErrExited", iter, err)
		}
		for range workers {
			select {
			case err := <-errc:
				if !errors.Is(err, ErrExited) {
					t.Errorf("iteration %d: request racing the crash: %v, want ErrExited", iter, err)
				}
			case <-time.After(evTimeout):
				t.Fatalf("iteration %d: a request racing the crash hangs", iter)
			}
		}
		waitEvent[*Exited](t, p, evTimeout, nil)
		expectClosed(t, p)
	}
}
