package kubernetes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestResumePerThread: the real CLI in Pods, against the fake model API on
// the node's loopback. A thread's session, closed, resumes in the thread's
// next Pod (the model is sent the earlier turn); the same session id from
// another thread of the channel finds nothing, nor from the thread itself
// once its state is removed (RemoveHome, as on `new`). The claim, read from
// outside, holds the transcript in the thread's home only, and each Pod
// mounts its own thread's; a start marks its home's modification time.
func TestResumePerThread(t *testing.T) {
	b := newModelBed(t, "sk-test")
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		text := "noted"
		if strings.Contains(req.LastUserText(), "which bird") {
			text = "no idea"
			if strings.Contains(req.Transcript(), "remember: pelican") {
				text = "it was the pelican"
			}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text(text)}}
	})
	dir := b.workDir(t, "ch/w")
	const ch = "slack/T1/C1"
	a := claudeproc.Session{Channel: ch, Thread: ch + "/1.0"}
	o := claudeproc.Options{Bin: "claude", Dir: dir, Runner: b.r, Session: a, StopGrace: 10 * time.Second, RequestTimeout: time.Minute,
		Env: []string{"ANTHROPIC_BASE_URL=" + api.URL, "LANG=C.UTF-8", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}}

	p, err := claudeproc.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SendText("remember: pelican"); err != nil {
		t.Fatal(err)
	}
	first := podTurn(t, p)
	if first == nil || first.IsError {
		t.Fatalf("first turn: %+v", first)
	}
	sid := first.SessionID
	closeProc(p)

	homeA, _ := b.r.homeDir(a)
	if got, _ := filepath.Glob(filepath.Join(homeA, "projects", "*", sid+".jsonl")); len(got) != 1 {
		t.Errorf("the transcript is not in thread A's home %s: %v", homeA, got)
	}
	b2 := claudeproc.Session{Channel: ch, Thread: ch + "/2.0"}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(homeA, old, old); err != nil {
		t.Fatal(err)
	}
	if !resumedInPod(t, b, o, a, sid) {
		t.Error("thread A's next Pod did not resume its session")
	}
	if fi, err := os.Stat(homeA); err != nil || time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("thread A's home not marked used by its start: %v %v", fi.ModTime(), err)
	}
	if resumedInPod(t, b, o, b2, sid) {
		t.Error("another thread of the channel resumed thread A's session")
	}
	homeB, _ := b.r.homeDir(b2)
	if got, _ := filepath.Glob(filepath.Join(homeB, "projects", "*", sid+".jsonl")); len(got) != 0 {
		t.Errorf("thread B's home holds thread A's transcript: %v", got)
	}
	if err := b.r.RemoveHome(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(homeA); !os.IsNotExist(err) {
		t.Errorf("thread A's home is still there: %v", err)
	}
	if resumedInPod(t, b, o, a, sid) {
		t.Error("thread A resumed its session after its home was removed")
	}
}

// resumedInPod resumes sid in a Pod of s and asks for the bird: true when
// the model was sent the earlier turn. The Pod must mount s's home.
func resumedInPod(t *testing.T, b *testBed, o claudeproc.Options, s claudeproc.Session, sid string) bool {
	t.Helper()
	o.Session, o.Resume = s, sid
	p, err := claudeproc.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer closeProc(p)
	_, wantSub := b.r.homeDir(s)
	pods := b.pods(t, LabelThread+"="+Hash(s.Thread))
	if len(pods) != 1 {
		t.Fatalf("%d Pods of thread %s, want 1", len(pods), s.Thread)
	}
	for _, m := range pods[0].Spec.Containers[0].VolumeMounts {
		if m.MountPath == Home+"/.claude" && m.SubPath != wantSub {
			t.Errorf("thread %s's Pod mounts %s at ~/.claude, want %s", s.Thread, m.SubPath, wantSub)
		}
	}
	_ = p.SendText("which bird?")
	res := podTurn(t, p)
	t.Logf("%s resuming %s: %+v", s.Thread, sid, res)
	return res != nil && !res.IsError && res.Result == "it was the pelican"
}

// podTurn waits for the turn's result; nil when the CLI ended first.
func podTurn(t *testing.T, p *claudeproc.Process) *claudeproc.Result {
	t.Helper()
	deadline := time.After(3 * time.Minute)
	for {
		select {
		case ev, ok := <-p.Events():
			if !ok {
				return nil
			}
			if r, ok := ev.(*claudeproc.Result); ok {
				return r
			}
		case <-deadline:
			t.Fatal("no result from the Pod's CLI")
		}
	}
}

func closeProc(p *claudeproc.Process) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.Close(ctx)
}
