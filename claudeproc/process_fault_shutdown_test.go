package claudeproc

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Fault tests of shutdown: a CLI that ignores SIGTERM, one that leaves a
// grandchild behind, and Close. The helpers are in process_fault_test.go.

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
