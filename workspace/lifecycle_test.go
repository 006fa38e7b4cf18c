package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func unpushed(t *testing.T, m *Manager, wt Worktree) int {
	t.Helper()
	n, err := m.Unpushed(testCtx(t), wt)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func commitFile(t *testing.T, m *Manager, wt Worktree, name, content string) string {
	t.Helper()
	writeFile(t, wt.Path, name, content)
	c, changed, err := m.Commit(testCtx(t), wt, "write "+name, Person{})
	if err != nil || !changed {
		t.Fatalf("Commit = %v, %v", changed, err)
	}
	return c
}

func TestUnpushedAndPush(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	wt := create(t, m, rem.dir, "push")
	if n := unpushed(t, m, wt); n != 0 {
		t.Fatalf("fresh worktree: %d unpushed", n)
	}
	commitFile(t, m, wt, "b.txt", "b\n")
	c2 := commitFile(t, m, wt, "c.txt", "c\n")
	if n := unpushed(t, m, wt); n != 2 {
		t.Fatalf("after two commits: %d unpushed, want 2", n)
	}
	if err := m.Push(testCtx(t), wt, ""); err != nil {
		t.Fatal(err)
	}
	if n := unpushed(t, m, wt); n != 0 {
		t.Errorf("after push: %d unpushed", n)
	}
	if got := rem.rev(wt.Branch); got != c2 {
		t.Errorf("remote %s at %s, want %s", wt.Branch, got, c2)
	}
	commitFile(t, m, wt, "d.txt", "d\n")
	if n := unpushed(t, m, wt); n != 1 {
		t.Errorf("after one more commit: %d unpushed, want 1", n)
	}
}

// Uncommitted work is committed on removal and the branch kept; a second
// Remove is not an error, and the kept branch can still be pushed.
func TestRemoveKeepsUncommittedWork(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "dirty")
	clone := filepath.Join(m.reposDir(), filepath.Base(filepath.Dir(wt.Path)))
	writeFile(t, wt.Path, "work.txt", "precious\n")
	for i := range 2 {
		kept, err := m.Remove(ctx, wt)
		if err != nil || !kept {
			t.Fatalf("Remove #%d = %v, %v; want kept", i+1, kept, err)
		}
	}
	if _, err := os.Lstat(wt.Path); !os.IsNotExist(err) {
		t.Errorf("worktree still there: %v", err)
	}
	if got := gitOK(t, "--git-dir="+clone, "show", wt.Branch+":work.txt"); got != "precious\n" {
		t.Errorf("kept work.txt = %q", got)
	}
	if got := gitOK(t, "--git-dir="+clone, "log", "-1", "--format=%s", wt.Branch); got != removalMessage+"\n" {
		t.Errorf("commit message %q", got)
	}
	if got := gitOK(t, "--git-dir="+clone, "worktree", "list", "--porcelain"); strings.Contains(got, wt.Path) {
		t.Errorf("git still lists the worktree:\n%s", got)
	}
	if _, err := m.Snapshot(ctx, wt); !errors.Is(err, ErrGone) {
		t.Errorf("Snapshot after Remove = %v, want ErrGone", err)
	}
	if err := m.Push(ctx, wt, ""); err != nil {
		t.Fatal(err)
	}
	if got := rem.git("show", wt.Branch+":work.txt"); got != "precious\n" {
		t.Errorf("pushed work.txt = %q", got)
	}
	if kept, err := m.Remove(ctx, wt); err != nil || kept {
		t.Errorf("Remove after the push = %v, %v; want the branch deleted", kept, err)
	}
}

func TestRemoveClean(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "clean")
	pushed := create(t, m, rem.dir, "pushed")
	c := commitFile(t, m, pushed, "p.txt", "p\n")
	if err := m.Push(ctx, pushed, ""); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(m.reposDir(), filepath.Base(filepath.Dir(wt.Path)))
	for _, w := range []Worktree{wt, pushed} {
		for i := range 2 {
			if kept, err := m.Remove(ctx, w); err != nil || kept {
				t.Fatalf("Remove %s #%d = %v, %v; want removed", w.Branch, i+1, kept, err)
			}
		}
		if _, err := os.Lstat(w.Path); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", w.Path, err)
		}
		if _, err := gitRun(t, nil, "--git-dir="+clone, "rev-parse", "--verify", "refs/heads/"+w.Branch); err == nil {
			t.Errorf("branch %s not deleted", w.Branch)
		}
	}
	if got := rem.rev(pushed.Branch); got != c {
		t.Errorf("the pushed branch on the remote is at %s, want %s", got, c)
	}
	if entries, _ := os.ReadDir(filepath.Join(clone, "worktrees")); len(entries) != 0 {
		t.Errorf("admin directories left: %v", entries)
	}
}

// A removal that a crash cut short after moving the tree aside is finished.
func TestRemoveAfterCrash(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	wt := create(t, m, rem.dir, "crashed")
	r, err := m.open(wt)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.discard(r, wt.Path); err != nil { // the crash comes right after
		t.Fatal(err)
	}
	if kept, err := m.Remove(testCtx(t), wt); err != nil || kept {
		t.Fatalf("Remove = %v, %v", kept, err)
	}
	if entries, _ := os.ReadDir(r.trees); len(entries) != 0 {
		t.Errorf("left in %s: %v", r.trees, entries)
	}
}

// Read-only directories (as a module cache makes) do not stop a removal.
func TestRemoveReadOnlyTree(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	wt := create(t, m, rem.dir, "readonly")
	writeFile(t, wt.Path, "cache/mod/x.go", "package x\n")
	for _, d := range []string{"cache/mod", "cache"} {
		if err := os.Chmod(filepath.Join(wt.Path, d), 0o555); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := m.Remove(testCtx(t), wt)
	if err != nil || !kept {
		t.Fatalf("Remove = %v, %v", kept, err)
	}
	if _, err := os.Lstat(wt.Path); !os.IsNotExist(err) {
		t.Errorf("still there: %v", err)
	}
}

func TestDiskUsageGrows(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"big.txt": strings.Repeat("0123456789abcdef", 1<<16)})
	m, _ := newManager(t)
	before, err := m.DiskUsage(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	create(t, m, rem.dir, "one")
	after, err := m.DiskUsage(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 1<<20 { // the 1 MiB checkout alone
		t.Errorf("DiskUsage %d → %d, want at least 1 MiB more", before, after)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.DiskUsage(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("DiskUsage with a cancelled ctx = %v", err)
	}
}

// Concurrent Creates of one repository, the first clone among them, each
// get their own branch and directory.
func TestConcurrentCreates(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	const n = 6
	wts := make([]Worktree, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { wts[i], errs[i] = m.Create(ctx, rem.dir, "same") })
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, wt := range wts {
		if errs[i] != nil {
			t.Fatalf("Create #%d: %v", i, errs[i])
		}
		if seen[wt.Branch] || seen[wt.Path] {
			t.Errorf("duplicate %+v", wt)
		}
		seen[wt.Branch], seen[wt.Path] = true, true
		if wt.Base != rem.rev("main") {
			t.Errorf("%s Base %s", wt.Branch, wt.Base)
		}
		if b, err := os.ReadFile(filepath.Join(wt.Path, "a.txt")); err != nil || string(b) != "a\n" {
			t.Errorf("%s: a.txt = %q, %v", wt.Branch, b, err)
		}
	}
	if entries, _ := os.ReadDir(m.reposDir()); len(entries) != 1 {
		t.Errorf("clones: %v, want one", entries)
	}
}

// A Worktree not made by this manager is refused before any git runs.
func TestForeignWorktreeRefused(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "mine")
	for name, bad := range map[string]Worktree{
		"path outside":     {Repo: wt.Repo, Path: "/etc", Branch: "claudeops/etc", Base: wt.Base},
		"path climbing":    {Repo: wt.Repo, Path: filepath.Join(filepath.Dir(wt.Path), "..", "x"), Branch: "claudeops/x", Base: wt.Base},
		"branch elsewhere": {Repo: wt.Repo, Path: wt.Path, Branch: "main", Base: wt.Base},
		"base a ref":       {Repo: wt.Repo, Path: wt.Path, Branch: wt.Branch, Base: "--all"},
		"other repo":       {Repo: "/elsewhere", Path: wt.Path, Branch: wt.Branch, Base: wt.Base},
	} {
		if _, err := m.Remove(ctx, bad); !errors.Is(err, ErrBadWorktree) {
			t.Errorf("%s: Remove = %v, want ErrBadWorktree", name, err)
		}
		if err := m.Push(ctx, bad, ""); !errors.Is(err, ErrBadWorktree) {
			t.Errorf("%s: Push = %v, want ErrBadWorktree", name, err)
		}
	}
	if _, err := os.Stat(wt.Path); err != nil {
		t.Errorf("the real worktree suffered: %v", err)
	}
}

func BenchmarkCreateRemove(b *testing.B) {
	rem := newRemote(b, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(b)
	ctx := testCtx(b)
	for b.Loop() {
		wt, err := m.Create(ctx, rem.dir, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Remove(ctx, wt); err != nil {
			b.Fatal(err)
		}
	}
}

// What a crash left in the temporary directory goes at the next start,
// whatever its age; what a live maker holds (another manager's work in
// progress) stays, however fresh or old. Across processes:
// TestStartKeepsLiveBotsTempClone.
func TestStaleTempDropped(t *testing.T) {
	m, _ := newManager(t)
	old, fresh, live := filepath.Join(m.tmpDir(), "clone-old"), filepath.Join(m.tmpDir(), "clone-fresh"), filepath.Join(m.tmpDir(), "clone-live")
	for _, d := range []string{old, fresh, live} {
		writeFile(t, d, "objects/x", "x")
	}
	long := time.Now().Add(-48 * time.Hour)
	for _, d := range []string{old, live} {
		if err := os.Chtimes(d, long, long); err != nil {
			t.Fatal(err)
		}
	}
	held, err := lockDir(live)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := New(Options{Dir: m.Dir()}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{old, fresh} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("dead run's %s kept: %v", d, err)
		}
	}
	if _, err := os.Stat(filepath.Join(live, "objects/x")); err != nil {
		t.Errorf("live maker's %s dropped: %v", live, err)
	}
}
