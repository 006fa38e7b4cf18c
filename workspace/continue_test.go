package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestContinue: a worktree continues a branch an earlier one pushed, at
// the remote's tip, and its push is a fast-forward (the oracle: the
// remote's own git). Branches not the bot's, missing on the remote, still
// checked out, or with commits the remote lacks are refused.
func TestContinue(t *testing.T) {
	tests := []struct {
		name string
		// setup leaves the clone and the remote as the case needs, and
		// returns the branch to continue.
		setup func(t *testing.T, m *Manager, rem *remote) string
		err   error
	}{
		{name: "a pushed branch whose worktree was removed", setup: pushedAndRemoved},
		{name: "a local copy behind the remote, its worktree gone by hand", setup: func(t *testing.T, m *Manager, rem *remote) string {
			b := pushedAndRemoved(t, m, rem)
			wt, err := m.Continue(testCtx(t), rem.dir, b)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(wt.Path); err != nil {
				t.Fatal(err)
			}
			rem.commit(b, map[string]string{"other.txt": "someone else\n"}, "ahead")
			return b
		}},
		{name: "not the bot's branch", err: ErrBadWorktree, setup: func(*testing.T, *Manager, *remote) string { return "main" }},
		{name: "a path, not a branch name", err: ErrBadWorktree, setup: func(*testing.T, *Manager, *remote) string { return "claudeops/../main" }},
		{name: "the remote lacks it", err: ErrGone, setup: func(*testing.T, *Manager, *remote) string { return "claudeops/nowhere" }},
		{name: "its worktree is still there", err: ErrBusy, setup: func(t *testing.T, m *Manager, rem *remote) string {
			wt := create(t, m, rem.dir, "schedule-1")
			writeFile(t, wt.Path, "night.txt", "1\n")
			commitAndPush(t, m, wt)
			return wt.Branch
		}},
		{name: "the clone's copy has commits the remote lacks", err: ErrBusy, setup: func(t *testing.T, m *Manager, rem *remote) string {
			wt := create(t, m, rem.dir, "schedule-1")
			writeFile(t, wt.Path, "night.txt", "1\n")
			commitAndPush(t, m, wt)
			writeFile(t, wt.Path, "night.txt", "2\n")
			if kept, err := m.Remove(testCtx(t), wt); err != nil || !kept {
				t.Fatalf("remove: kept %v, %v", kept, err)
			}
			return wt.Branch
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rem := newRemote(t, "main", map[string]string{"a.txt": "1\n"})
			m, _ := newManager(t)
			branch := tt.setup(t, m, rem)
			ctx := testCtx(t)
			wt, err := m.Continue(ctx, rem.dir, branch)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Continue(%q) = %+v, %v; want %v", branch, wt, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tip := rem.rev(branch)
			if wt.Branch != branch || wt.Base != tip {
				t.Fatalf("worktree %+v, want branch %s at the remote's tip %s", wt, branch, tip)
			}
			if b, err := os.ReadFile(filepath.Join(wt.Path, "night.txt")); err != nil || string(b) != "1\n" {
				t.Fatalf("night.txt = %q, %v: not the earlier run's work", b, err)
			}
			writeFile(t, wt.Path, "night.txt", "1\n2\n")
			id := commitAndPush(t, m, wt)
			if got := rem.rev(branch); got != id {
				t.Errorf("the remote's %s at %s, want %s", branch, got, id)
			}
			rem.git("merge-base", "--is-ancestor", tip, id) // fails the test when not
			if d, err := m.Unpushed(ctx, wt); err != nil || d != 0 {
				t.Errorf("unpushed %d, %v", d, err)
			}
		})
	}
}

// TestContinueNeverForces: when the remote's branch moves after Continue,
// the push is refused and the remote keeps the other commit.
func TestContinueNeverForces(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "1\n"})
	m, _ := newManager(t)
	b := pushedAndRemoved(t, m, rem)
	wt, err := m.Continue(testCtx(t), rem.dir, b)
	if err != nil {
		t.Fatal(err)
	}
	other := rem.commit(b, map[string]string{"other.txt": "x\n"}, "meanwhile")
	writeFile(t, wt.Path, "night.txt", "2\n")
	if _, _, err := m.Commit(testCtx(t), wt, "two", Person{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Push(testCtx(t), wt, ""); err == nil {
		t.Fatal("a push over the remote's newer commit succeeded")
	}
	if got := rem.rev(b); got != other {
		t.Errorf("the remote's %s at %s, want the other commit %s kept", b, got, other)
	}
}

// pushedAndRemoved is a branch an earlier worktree committed night.txt on
// and pushed, the worktree then removed (and the branch with it).
func pushedAndRemoved(t *testing.T, m *Manager, rem *remote) string {
	t.Helper()
	wt := create(t, m, rem.dir, "schedule-1")
	writeFile(t, wt.Path, "night.txt", "1\n")
	commitAndPush(t, m, wt)
	if kept, err := m.Remove(testCtx(t), wt); err != nil || kept {
		t.Fatalf("remove: kept %v, %v", kept, err)
	}
	return wt.Branch
}

func commitAndPush(t *testing.T, m *Manager, wt Worktree) string {
	t.Helper()
	id, changed, err := m.Commit(testCtx(t), wt, "night", Person{})
	if err != nil || !changed {
		t.Fatalf("commit: %v %v", changed, err)
	}
	if err := m.Push(testCtx(t), wt, ""); err != nil {
		t.Fatal(err)
	}
	return id
}
