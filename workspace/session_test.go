package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSessionDirs: what a session in a worktree is shown of its clone, and
// how: the clone readable, what a commit writes writable, reflogs its own,
// its own admin directory writable inside a hidden worktrees/, hooks
// hidden (made when missing); a worktree not this manager's, or without its admin directory,
// gets nothing. (That the runners show it so, and that git then works and
// runs nothing of the session's: internal/runnergit.)
func TestSessionDirs(t *testing.T) {
	m, _ := newManager(t)
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	wt := create(t, m, rem.dir, "one")
	other := create(t, m, rem.dir, "two")
	clone := cloneOf(m, wt)
	list := func(wt Worktree) ([]string, error) {
		dirs, err := m.SessionDirs(wt)
		var out []string
		for _, d := range dirs {
			rel, _ := filepath.Rel(clone, d.Path)
			out = append(out, rel+" "+[]string{"readable", "writable", "hidden", "scratch"}[d.Access])
		}
		return out, err
	}
	got, err := list(wt)
	want := []string{". readable", "objects writable", "objects/info readable", "refs writable", "logs scratch",
		"hooks hidden", "worktrees hidden", "worktrees/one writable"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("SessionDirs = %q, %v; want %q", got, err, want)
	}
	for _, d := range []string{"logs", "hooks"} {
		if fi, err := os.Stat(filepath.Join(clone, d)); err != nil || !fi.IsDir() {
			t.Errorf("%s/ was not made: %v", d, err)
		}
	}
	if got, err := list(other); err != nil || got[len(got)-1] != "worktrees/two writable" {
		t.Errorf("the other worktree's: %q, %v", got, err)
	}
	if err := os.Remove(filepath.Join(clone, "hooks")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(clone, "hooks")); err != nil {
		t.Fatal(err)
	}
	if _, err := list(wt); err == nil || !strings.Contains(err.Error(), "hooks is not a directory") {
		t.Errorf("hooks/ a link: %v, want it refused", err)
	}
	if _, err := list(Worktree{Repo: wt.Repo, Path: "/elsewhere/one", Branch: wt.Branch, Base: wt.Base}); !errors.Is(err, ErrBadWorktree) {
		t.Errorf("a worktree not the manager's: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(clone, "worktrees", "one")); err != nil {
		t.Fatal(err)
	}
	if _, err := list(wt); !errors.Is(err, ErrGone) {
		t.Errorf("no admin directory: %v, want ErrGone", err)
	}
}
