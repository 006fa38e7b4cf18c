package claudeproc

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestHomeNames: homes are per thread (per channel only when no thread is
// given), the same in every runner of a base, and a key cannot name a path.
func TestHomeNames(t *testing.T) {
	sb := Sandbox{HomeBase: "/homes"}
	a1 := sb.home(Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1.0"})
	a1again := sb.home(Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1.0"})
	a2 := sb.home(Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/2.0"})
	b := sb.home(Session{Channel: "slack/T1/C2", Thread: "slack/T1/C2/1.0"})
	ch := sb.home(Session{Channel: "slack/T1/C1"})
	up := sb.home(Session{Channel: "../../etc"})
	upThread := sb.home(Session{Channel: "c", Thread: "../../etc"})
	if a1 != a1again || a1 == a2 || a1 == b || a2 == b || ch == a1 || ch == a2 {
		t.Errorf("homes not per thread: %s %s %s %s %s", a1, a1again, a2, b, ch)
	}
	for _, h := range []string{a1, a2, b, ch, up, upThread} {
		if filepath.Dir(h) != "/homes" {
			t.Errorf("home %s is not directly in the base", h)
		}
	}
	if local := HomeIn("/homes", Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1.0"}); local != a1 {
		t.Errorf("local and sandbox name homes apart: %s %s", local, a1)
	}
}

// TestRemoveHome: a thread's home goes with all in it, the others stay; a
// link in its place goes, not what it names; a home not there, or no base,
// is no error.
func TestRemoveHome(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	a := Session{Channel: "c", Thread: "c/1"}
	b := Session{Channel: "c", Thread: "c/2"}
	for _, s := range []Session{a, b} {
		if err := makeHome(base, HomeIn(base, s)); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(HomeIn(base, s), "projects", "p"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := (Local{HomeBase: base}).RemoveHome(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(HomeIn(base, a)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("thread a's home is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(HomeIn(base, b), "projects", "p")); err != nil {
		t.Errorf("thread b's home went too: %v", err)
	}
	kept := filepath.Join(outside, "kept")
	if err := os.WriteFile(kept, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, HomeIn(base, a)); err != nil {
		t.Fatal(err)
	}
	if err := (Sandbox{HomeBase: base}).RemoveHome(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("removing a link in a home's place removed what it names: %v", err)
	}
	for _, r := range []interface {
		RemoveHome(context.Context, Session) error
	}{Local{HomeBase: base}, Local{}, Sandbox{HomeBase: base}} {
		if err := r.RemoveHome(context.Background(), a); err != nil {
			t.Errorf("%T: removing no home: %v", r, err)
		}
	}
}

// TestMakeHomeMarksUse: each start marks the home's modification time,
// which the CLI leaves alone on a resume; a link in a home's place is
// refused.
func TestMakeHomeMarksUse(t *testing.T) {
	base := t.TempDir()
	home := HomeIn(base, Session{Thread: "c/1"})
	if err := makeHome(base, home); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(home, old, old); err != nil {
		t.Fatal(err)
	}
	if err := makeHome(base, home); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(home); err != nil || time.Since(fi.ModTime()) > time.Hour || fi.Mode().Perm() != 0o700 {
		t.Errorf("home after a start: %v %v", fi, err)
	}
	link := HomeIn(base, Session{Thread: "c/2"})
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if err := makeHome(base, link); err == nil {
		t.Error("a link in a home's place was taken for the home")
	}
}

// TestSetEnv: the runner's value wins over the one the bot passed on.
func TestSetEnv(t *testing.T) {
	got := setEnv([]string{"CLAUDE_CONFIG_DIR=/home/bot/.claude", "PATH=/bin", "CLAUDE_CONFIG_DIRX=y"}, "CLAUDE_CONFIG_DIR", "/homes/a")
	want := []string{"PATH=/bin", "CLAUDE_CONFIG_DIRX=y", "CLAUDE_CONFIG_DIR=/homes/a"}
	if !slices.Equal(got, want) {
		t.Errorf("env = %q, want %q", got, want)
	}
}
