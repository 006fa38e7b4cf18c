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
	"os"
	"runtime"
	"strings"
	"sync"
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
	deadline := time.Now().Add(timeout)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive %s after the fake ended", pid, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
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

func TestFaultStderrFlood(t *testing.T) {
	const keep = 16 << 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()

	p := startFake(t, fakeStderrFlood, Options{StderrBytes: keep})
	if err := p.SendText("one"); err != nil {
		t.Fatal(err)
	}
	// Turns go on while stderr floods: "one", then "two" once "one" is done.
	var results []string
	floodBytes := 0
	for len(results) < 2 || floodBytes == 0 {
		switch e := waitEvent[Event](t, p, time.Minute, nil).(type) {
		case *Result:
			results = append(results, e.Result)
			if len(results) == 1 {
				if err := p.SendText("two"); err != nil {
					t.Fatal(err)
				}
			}
		case *Unknown:
			if e.Type != "fake_flood_done" {
				t.Fatalf("unexpected line %s", e.Raw)
			}
			var v struct{ Bytes int }
			json.Unmarshal(e.Raw, &v)
			floodBytes = v.Bytes
		case *SystemInit, *StreamEvent:
		default:
			t.Fatalf("unexpected event %s", e.Kind())
		}
	}
	if strings.Join(results, ",") != "done: one,done: two" {
		t.Errorf("results %q", results)
	}
	if floodBytes < fakeFloodBytes {
		t.Fatalf("fake wrote only %d bytes to stderr", floodBytes)
	}
	info, _ := closeWithin(t, p)
	if info.Reason != "exited with code 0" {
		t.Errorf("reason %q", info.Reason)
	}
	waitEvent[*Exited](t, p, evTimeout, nil)
	expectClosed(t, p)
	elapsed := time.Since(start)

	tail := info.StderrTail
	if len(tail) > keep || len(tail) < keep/2 {
		t.Errorf("StderrTail is %d bytes, want at most (and near) %d", len(tail), keep)
	}
	// The flood ends with fakeFloodEnd, then the fake notes the stdin EOF.
	if !strings.HasSuffix(tail, fakeFloodEnd+"fake: stdin closed\n") {
		t.Errorf("StderrTail does not end with the last bytes written: ...%q", tail[max(0, len(tail)-200):])
	}
	if !strings.HasPrefix(tail, "fake: stderr flood ") {
		t.Errorf("StderrTail does not start at a line boundary: %q...", tail[:min(len(tail), 80)])
	}

	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB of stderr in %s; heap growth %d KiB, allocated %d KiB in all", floodBytes>>20, elapsed.Round(time.Millisecond), growth>>10, allocated>>10)
	if growth > 4<<20 {
		t.Errorf("heap grew by %d KiB over a stderr flood", growth>>10)
	}
	// Not even transiently: the flood is never buffered or copied per
	// chunk on the heap.
	if allocated > 32<<20 {
		t.Errorf("%d MiB allocated while %d MiB of stderr went by", allocated>>20, floodBytes>>20)
	}
}

func TestFaultIgnoresSIGTERM(t *testing.T) {
	p := startFake(t, fakeIgnoreTerm, Options{StopGrace: fakeGrace})
	if err := p.SendText("hi"); err != nil {
		t.Fatal(err)
	}
	// The fake ignores SIGTERM before it reads stdin, so it does now.
	waitEvent[*Result](t, p, evTimeout, nil)

	info, d := closeWithin(t, p)
	t.Logf("Close took %s: %s", d, brief(info))
	// stdin close, a grace, SIGTERM, a grace, SIGKILL.
	if d < 2*fakeGrace {
		t.Errorf("Close took %s, less than the two graces it must wait", d)
	}
	if d > 3*fakeGrace+time.Second {
		t.Errorf("Close took %s, want at most ~3×StopGrace", d)
	}
	if info.Signal != "SIGKILL" || info.Code != -1 {
		t.Errorf("signal %q code %d, want SIGKILL -1", info.Signal, info.Code)
	}
	if !strings.Contains(info.Reason, "ignored SIGTERM") {
		t.Errorf("reason %q does not say it ignored SIGTERM", info.Reason)
	}
	if !strings.Contains(info.StderrTail, "staying alive anyway") {
		t.Errorf("fake did not see stdin EOF: …%q", lastN(info.StderrTail))
	}
	ex := waitEvent[*Exited](t, p, evTimeout, nil)
	if ex.Info != info || ex.MidTurn {
		t.Errorf("Exited %s (mid-turn %v), want %s and not mid-turn", brief(ex.Info), ex.MidTurn, brief(info))
	}
	expectClosed(t, p)
}

func TestFaultGrandchild(t *testing.T) {
	t.Run("exit leaves it in the group", func(t *testing.T) {
		// A long grace: Exited must come from the group kill closing
		// stdout, not from giving up on it.
		const grace = 5 * time.Second
		p := startFake(t, fakeGrandchild, Options{StopGrace: grace})
		if err := p.SendText("go"); err != nil {
			t.Fatal(err)
		}
		u := waitEvent(t, p, evTimeout, func(u *Unknown) bool { return u.Type == "fake_grandchild" })
		pid := fakeLinePID(t, u)
		killSleepAtEnd(t, pid)
		start := time.Now()
		ex := waitEvent[*Exited](t, p, evTimeout, nil)
		d := time.Since(start)
		t.Logf("Exited %s after the grandchild line: %s", d, brief(ex.Info))
		if d > grace/2 {
			t.Errorf("Exited took %s with a grandchild holding stdout", d)
		}
		if ex.Info.Reason != "exited with code 0" {
			t.Errorf("reason %q", ex.Info.Reason)
		}
		expectClosed(t, p)
		waitGone(t, pid, 5*time.Second)
	})

	t.Run("close while it runs", func(t *testing.T) {
		const grace = 5 * time.Second
		p := startFake(t, fakeGrandchildStay, Options{StopGrace: grace})
		if err := p.SendText("go"); err != nil {
			t.Fatal(err)
		}
		u := waitEvent(t, p, evTimeout, func(u *Unknown) bool { return u.Type == "fake_grandchild" })
		pid := fakeLinePID(t, u)
		killSleepAtEnd(t, pid)
		waitEvent[*Result](t, p, evTimeout, nil)
		info, d := closeWithin(t, p)
		t.Logf("Close took %s: %s", d, brief(info))
		if d > grace/2 || info.Reason != "exited with code 0" {
			t.Errorf("Close took %s, reason %q; want a prompt exit 0", d, info.Reason)
		}
		waitEvent[*Exited](t, p, evTimeout, nil)
		expectClosed(t, p)
		waitGone(t, pid, 5*time.Second)
	})

	t.Run("setsid escapes the group", func(t *testing.T) {
		p := startFake(t, fakeGrandchildSetsid, Options{StopGrace: fakeGrace})
		if err := p.SendText("go"); err != nil {
			t.Fatal(err)
		}
		u := waitEvent(t, p, evTimeout, func(u *Unknown) bool { return u.Type == "fake_grandchild" })
		pid := fakeLinePID(t, u)
		killSleepAtEnd(t, pid)
		start := time.Now()
		ex := waitEvent[*Exited](t, p, evTimeout, nil)
		d := time.Since(start)
		t.Logf("Exited %s after the grandchild line: %s", d, brief(ex.Info))
		// It holds stderr too: that wait must not add its own second.
		if d > 2*fakeGrace+200*time.Millisecond {
			t.Errorf("Exited took %s, want about StopGrace (%s)", d, fakeGrace)
		}
		if ex.Info.Reason != "exited with code 0" {
			t.Errorf("reason %q", ex.Info.Reason)
		}
		if !strings.Contains(ex.Info.StderrTail, fmt.Sprintf("grandchild pid %d", pid)) {
			t.Errorf("StderrTail …%q", lastN(ex.Info.StderrTail))
		}
		expectClosed(t, p)
		// It escaped the group kill (else this test tests nothing); the
		// test ends it itself.
		if processGone(pid) {
			t.Fatalf("escaped grandchild %d died with the group", pid)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, pid, 5*time.Second)
	})
}

func TestFaultControlTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	p := startFake(t, fakeMuteControl, Options{RequestTimeout: timeout})

	start := time.Now()
	_, err := p.SetModel(context.Background(), "opus")
	d := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("SetModel: %v, want ErrTimeout", err)
	}
	if d < timeout || d > timeout+2*time.Second {
		t.Errorf("SetModel timed out after %s, want about %s", d, timeout)
	}
	// An earlier deadline of the caller's wins, and is what the error says.
	ctx, cancel := context.WithTimeout(context.Background(), timeout/4)
	_, err = p.Interrupt(ctx, false)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
		t.Fatalf("Interrupt with a short ctx: %v, want context.DeadlineExceeded", err)
	}
	p.mu.Lock()
	n := len(p.pending)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("%d requests still pending after they timed out", n)
	}

	// The process still works; the late answers surface as events.
	if err := p.SendText("next"); err != nil {
		t.Fatal(err)
	}
	var late []string
	for i := 0; i < 2; i++ {
		cr := expectNext[*ControlResponse](t, p)
		if cr.Subtype != "success" {
			t.Errorf("late response %+v", cr)
		}
		late = append(late, cr.RequestID)
	}
	if len(late) != 2 || !strings.Contains(late[0], "set_model") || !strings.Contains(late[1], "interrupt") {
		t.Errorf("late responses for %q, want the set_model then the interrupt request", late)
	}
	if r := waitEvent[*Result](t, p, evTimeout, nil); r.Result != "done: next" {
		t.Errorf("result %q", r.Result)
	}
	if info, _ := closeWithin(t, p); info.Reason != "exited with code 0" {
		t.Errorf("reason %q", info.Reason)
	}
}

func TestFaultMalformedOutput(t *testing.T) {
	const maxLine = 64 << 10
	p := startFake(t, fakeGarbage, Options{MaxLineBytes: maxLine})
	for _, msg := range []string{"first", "second"} {
		if err := p.SendText(msg); err != nil {
			t.Fatal(err)
		}
		expectNext[*SystemInit](t, p)
		expectNext[*StreamEvent](t, p)
		if pe := expectNext[*ParseError](t, p); !bytes.Contains(pe.Line, []byte("cut off")) {
			t.Errorf("parse error line %q", pe.Line)
		}
		if u := expectNext[*Unknown](t, p); u.Type != "fake_unknown_type" {
			t.Errorf("unknown %q/%q", u.Type, u.Subtype)
		}
		tr := expectNext[*Truncated](t, p)
		if tr.Type != "user" || tr.ToolUseID != "toolu_huge" || tr.OriginalSize != fakeHugeLine {
			t.Errorf("truncated type %q tool_use_id %q size %d", tr.Type, tr.ToolUseID, tr.OriginalSize)
		}
		if len(tr.Prefix) > maxLine+100 || !bytes.HasSuffix(tr.Prefix, []byte("[truncated: original_size=1048576 bytes]")) {
			t.Errorf("truncated prefix of %d bytes ending %q", len(tr.Prefix), tr.Prefix[max(0, len(tr.Prefix)-60):])
		}
		if u := expectNext[*Unknown](t, p); u.Type != "system" || u.Subtype != "fake_new_subtype" {
			t.Errorf("unknown %q/%q", u.Type, u.Subtype)
		}
		if r := expectNext[*Result](t, p); r.Result != "done: "+msg {
			t.Errorf("result %q", r.Result)
		}
	}
	if info, _ := closeWithin(t, p); info.Reason != "exited with code 0" {
		t.Errorf("reason %q", info.Reason)
	}
	expectNext[*Exited](t, p)
	expectClosed(t, p)
}

func TestFaultClose(t *testing.T) {
	// A long grace: a graceful Close must not need it (a SIGTERM would
	// show as the signal).
	const grace = 5 * time.Second

	t.Run("idle", func(t *testing.T) {
		p := startFake(t, fakeBasic, Options{StopGrace: grace})
		if err := p.SendText("hi"); err != nil {
			t.Fatal(err)
		}
		waitEvent[*Result](t, p, evTimeout, nil)
		if p.InTurn() {
			t.Fatal("InTurn after the result")
		}
		info, d := closeWithin(t, p)
		t.Logf("Close took %s", d)
		if info.Reason != "exited with code 0" || info.Signal != "" || info.Code != 0 {
			t.Errorf("exit info %s", brief(info))
		}
		if !strings.Contains(info.StderrTail, "fake: stdin closed") || strings.Contains(info.StderrTail, "control_request") {
			t.Errorf("StderrTail …%q: want stdin closed and no control request", lastN(info.StderrTail))
		}
		if ex := expectNext[*Exited](t, p); ex.MidTurn {
			t.Error("MidTurn after an idle close")
		}
		expectClosed(t, p)
	})

	t.Run("mid-turn interrupts first", func(t *testing.T) {
		p := startFake(t, fakeBasic, Options{StopGrace: grace})
		if err := p.SendText("hold"); err != nil {
			t.Fatal(err)
		}
		expectNext[*SystemInit](t, p)
		expectNext[*StreamEvent](t, p)
		if !p.InTurn() {
			t.Fatal("not InTurn while the turn is held")
		}
		info, d := closeWithin(t, p)
		t.Logf("Close took %s", d)
		if info.Reason != "exited with code 0" || info.Signal != "" {
			t.Errorf("exit info %s", brief(info))
		}
		var req string
		for _, l := range strings.Split(info.StderrTail, "\n") {
			if s, ok := strings.CutPrefix(l, "fake: control_request "); ok {
				req = s
			}
		}
		var v struct {
			Type    string
			Request struct{ Subtype string }
		}
		if err := json.Unmarshal([]byte(req), &v); err != nil || v.Type != "control_request" || v.Request.Subtype != "interrupt" {
			t.Errorf("fake got no interrupt before stdin closed; stderr …%q", lastN(info.StderrTail))
		}
		if i, j := strings.Index(info.StderrTail, "control_request"), strings.Index(info.StderrTail, "stdin closed"); i < 0 || j < i {
			t.Errorf("interrupt not before stdin close: …%q", lastN(info.StderrTail))
		}
		r := expectNext[*Result](t, p)
		if r.Subtype != "error_during_execution" || !r.IsError {
			t.Errorf("result %+v", r)
		}
		if ex := expectNext[*Exited](t, p); ex.MidTurn {
			t.Error("MidTurn although the interrupted turn ended")
		}
		expectClosed(t, p)
	})
}

func TestFaultConcurrentWriters(t *testing.T) {
	p := startFake(t, fakeEcho, Options{})

	var (
		mu       sync.Mutex
		echoed   = map[string]int{}
		bad      []string
		sentinel = make(chan struct{})
	)
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *Unknown:
				var v struct{ Text string }
				if e.Type != "fake_echo" || json.Unmarshal(e.Raw, &v) != nil {
					mu.Lock()
					bad = append(bad, string(e.Raw))
					mu.Unlock()
					continue
				}
				if v.Text == "sentinel" {
					close(sentinel)
					continue
				}
				mu.Lock()
				echoed[v.Text]++
				mu.Unlock()
			case *Exited:
			default:
				mu.Lock()
				bad = append(bad, ev.Kind())
				mu.Unlock()
			}
		}
	}()

	const workers, rounds = 16, 24
	// Sizes past the 64 KiB pipe buffer make the kernel split writes, so
	// unserialized writers would interleave.
	sizes := []int{10, 3000, 70 << 10, 200 << 10}
	var (
		wg   sync.WaitGroup
		sent sync.Map
	)
	errc := make(chan error, workers*rounds)
	ctx := context.Background()
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				tag := fmt.Sprintf("g%02d-i%03d", g, i)
				var err error
				switch (g + i) % 4 {
				case 0:
					text := tag + "|" + strings.Repeat(string(rune('a'+(g+i)%26)), sizes[(g*rounds+i)%len(sizes)]) + "|" + tag
					sent.Store(text, true)
					err = p.SendText(text)
				case 1:
					var got string
					got, err = p.SetModel(ctx, "model-"+tag)
					if err == nil && got != "model-"+tag {
						err = fmt.Errorf("SetModel(%q) = %q: response routed to the wrong caller", "model-"+tag, got)
					}
				case 2:
					_, err = p.Interrupt(ctx, i%2 == 0)
				case 3:
					var got string
					got, err = p.SetPermissionMode(ctx, "mode-"+tag)
					if err == nil && got != "mode-"+tag {
						err = fmt.Errorf("SetPermissionMode(%q) = %q: response routed to the wrong caller", "mode-"+tag, got)
					}
				}
				if err != nil {
					errc <- fmt.Errorf("%s: %w", tag, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	// Echoes come in stdin order: once the sentinel is back, all are.
	if err := p.SendText("sentinel"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sentinel:
	case <-collected:
		t.Fatal("events ended before the sentinel came back")
	case <-time.After(evTimeout):
		t.Fatal("sentinel not echoed")
	}

	mu.Lock()
	nSent := 0
	sent.Range(func(k, _ any) bool {
		nSent++
		if echoed[k.(string)] != 1 {
			t.Errorf("message %.20q... echoed %d times", k, echoed[k.(string)])
		}
		return true
	})
	if len(echoed) != nSent {
		t.Errorf("%d distinct echoes for %d messages sent (corrupted lines?)", len(echoed), nSent)
	}
	if len(bad) > 0 {
		t.Errorf("unexpected events: %.300q", bad)
	}
	mu.Unlock()

	info, _ := closeWithin(t, p)
	// The fake exits 1 on any invalid or partial stdin line.
	if info.Reason != "exited with code 0" {
		t.Errorf("exit %s", brief(info))
	}
	select {
	case <-collected:
	case <-time.After(evTimeout):
		t.Fatal("events channel not closed")
	}
	t.Logf("%d messages and %d control requests from %d goroutines", nSent, workers*rounds-nSent, workers)
}
