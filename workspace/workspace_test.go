package workspace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Two threads of one repository edit the same file at once: each ends on
// its own branch with its change, both pushed, the default branch untouched.
func TestTwoWorktreesSameFile(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"shared.txt": "top\n"})
	tip := rem.rev("main")
	m, _ := newManager(t)
	ctx := testCtx(t)
	a, b := create(t, m, rem.dir, "thread-a"), create(t, m, rem.dir, "thread-b")
	if a.Path == b.Path || a.Branch == b.Branch {
		t.Fatalf("shared worktree: %+v %+v", a, b)
	}
	edits := map[*Worktree]string{&a: "top\nfrom a\n", &b: "from b\ntop\n"}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for wt, content := range edits {
		wg.Go(func() {
			if err := os.WriteFile(filepath.Join(wt.Path, "shared.txt"), []byte(content), 0o644); err != nil {
				errs <- err
				return
			}
			if _, changed, err := m.Commit(ctx, *wt, "edit by "+wt.Branch, Person{}); err != nil || !changed {
				errs <- fmt.Errorf("commit %s: %v %w", wt.Branch, changed, err)
				return
			}
			if err := m.Push(ctx, *wt, ""); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for wt, content := range edits {
		if got := rem.git("show", wt.Branch+":shared.txt"); got != content {
			t.Errorf("%s: shared.txt = %q, want %q", wt.Branch, got, content)
		}
		if got := rem.rev(wt.Branch + "^"); got != tip {
			t.Errorf("%s does not start from main's tip: parent %s", wt.Branch, got)
		}
	}
	if got := rem.rev("main"); got != tip {
		t.Errorf("main moved to %s", got)
	}
}

// A Create after the remote moved starts from the new tip.
func TestCreateFetchesNewTip(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "1\n"})
	m, _ := newManager(t)
	first := create(t, m, rem.dir, "first")
	if first.Base != rem.rev("main") {
		t.Fatalf("Base %s, want main %s", first.Base, rem.rev("main"))
	}
	tip := rem.commit("main", map[string]string{"a.txt": "2\n"}, "moved")
	second := create(t, m, rem.dir, "second")
	if second.Base != tip {
		t.Errorf("Base %s, want the new tip %s", second.Base, tip)
	}
	if b, _ := os.ReadFile(filepath.Join(second.Path, "a.txt")); string(b) != "2\n" {
		t.Errorf("a.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(first.Path, "a.txt")); string(b) != "1\n" {
		t.Errorf("the first worktree changed: a.txt = %q", b)
	}
}

// The default branch is whatever the remote's HEAD names, else main or master.
func TestDefaultBranch(t *testing.T) {
	trunk := newRemote(t, "trunk", map[string]string{"which": "trunk\n"})
	trunk.commit("main", map[string]string{"which": "main\n"}, "a decoy main")
	dangling := newRemote(t, "master", map[string]string{"which": "master\n"})
	dangling.git("symbolic-ref", "HEAD", "refs/heads/gone")
	for _, tt := range []struct {
		rem  *remote
		want string
	}{{trunk, "trunk"}, {dangling, "master"}} {
		m, _ := newManager(t)
		got, err := m.Check(testCtx(t), tt.rem.dir)
		if err != nil || got != tt.want {
			t.Errorf("Check = %q, %v; want %q", got, err, tt.want)
		}
		wt := create(t, m, tt.rem.dir, "x")
		if wt.Base != tt.rem.rev(tt.want) {
			t.Errorf("Base %s, want %s's tip", wt.Base, tt.want)
		}
		if b, _ := os.ReadFile(filepath.Join(wt.Path, "which")); string(b) != tt.want+"\n" {
			t.Errorf("checked out %q, want %s", b, tt.want)
		}
	}
}

// Check of a repository without a usable default branch fails, keeping nothing.
func TestCheckFailsCleanly(t *testing.T) {
	m, _ := newManager(t)
	missing := filepath.Join(t.TempDir(), "missing.git")
	if _, err := m.Check(testCtx(t), missing); err == nil {
		t.Fatal("Check of a missing repository succeeded")
	}
	if entries, _ := os.ReadDir(m.reposDir()); len(entries) != 0 {
		t.Errorf("a failed clone was kept: %v", entries)
	}
	if entries, _ := os.ReadDir(m.tmpDir()); len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// numstat is the oracle: git diff --numstat of the worktree staged with
// plain "git add -A" (the test's git, on a copy of the index), against base.
func oracleNumstat(t *testing.T, wt Worktree, base string, extra ...string) map[string][2]string {
	t.Helper()
	index := filepath.Join(t.TempDir(), "index")
	env := append(oracleEnv(t.TempDir()), "GIT_INDEX_FILE="+index)
	run := func(args ...string) string {
		cmd := osCommand(realGit, append([]string{"-C", wt.Path}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("oracle git %q: %v", args, err)
		}
		return string(out)
	}
	run("read-tree", wt.Branch)
	run("add", "-A")
	got := map[string][2]string{}
	sc := bufio.NewScanner(strings.NewReader(run(append([]string{"diff", "--cached", "--numstat"}, append(extra, base)...)...)))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		got[f[2]] = [2]string{f[0], f[1]}
	}
	return got
}

func statMap(st Stat) map[string][2]string {
	out := map[string][2]string{}
	for _, f := range st.Files {
		if f.Binary {
			out[f.Path] = [2]string{"-", "-"}
			continue
		}
		out[f.Path] = [2]string{strconv.Itoa(f.Added), strconv.Itoa(f.Removed)}
	}
	return out
}

// Changes and Diff agree with git diff --numstat run by the test, and
// the patch applies to Base to give the worktree's content.
func TestChangesAndDiffMatchGit(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{
		"keep.txt": "1\n2\n3\n4\n", "gone.txt": "bye\n", "sub/deep.go": "package sub\n",
		".gitignore": "*.log\nbuild/\n", "tracked.log": "tracked though ignored\n",
	})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "stats")
	before, err := m.Snapshot(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if tree := rem.rev(wt.Base + "^{tree}"); before != tree {
		t.Errorf("snapshot of a fresh worktree %s, want Base's tree %s", before, tree)
	}
	writeFile(t, wt.Path, "keep.txt", "1\ntwo\n3\n4\n5\n")
	writeFile(t, wt.Path, "new.txt", "a\nb\nc\n")
	writeFile(t, wt.Path, "sub/deep.go", "package sub\n\nfunc F() {}\n")
	writeFile(t, wt.Path, "tracked.log", "still tracked\n")
	writeFile(t, wt.Path, "ignored.log", "not counted\n")
	writeFile(t, wt.Path, "build/out", "not counted\n")
	writeFile(t, wt.Path, "blob.bin", "\x00\x01\x02binary\x00")
	if err := os.Remove(filepath.Join(wt.Path, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	after, err := m.Snapshot(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	stat, err := m.Changes(ctx, wt, wt.Base, after)
	if err != nil {
		t.Fatal(err)
	}
	want := oracleNumstat(t, wt, wt.Base)
	if got := statMap(stat); !mapsEqual(got, want) {
		t.Errorf("Changes = %v\noracle  = %v", got, want)
	}
	added, removed := 0, 0
	for _, f := range stat.Files {
		added, removed = added+f.Added, removed+f.Removed
	}
	if stat.Added != added || stat.Removed != removed || added == 0 {
		t.Errorf("totals %d/%d, files sum to %d/%d", stat.Added, stat.Removed, added, removed)
	}
	if got := gitOK(t, "-C", wt.Path, "ls-files", "--", "new.txt"); got != "" {
		t.Errorf("Snapshot staged into the worktree's own index: %q", got)
	}

	patch, dstat, err := m.Diff(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(statMap(dstat), want) {
		t.Errorf("Diff stat = %v\noracle   = %v", statMap(dstat), want)
	}
	if !strings.Contains(string(patch), "Binary files /dev/null and b/blob.bin differ") {
		t.Errorf("binary file not marked in the patch:\n%s", patch)
	}
	// The patch, without the binary file, applied to Base gives the worktree.
	check := filepath.Join(t.TempDir(), "check")
	gitOK(t, "clone", "--quiet", rem.dir, check)
	if _, err := gitRun(t, patch, "-C", check, "apply", "--exclude=blob.bin", "-"); err != nil {
		t.Fatalf("the patch does not apply to Base: %v", err)
	}
	for _, f := range []string{"keep.txt", "new.txt", "sub/deep.go", "tracked.log"} {
		a, _ := os.ReadFile(filepath.Join(check, f))
		b, _ := os.ReadFile(filepath.Join(wt.Path, f))
		if string(a) != string(b) {
			t.Errorf("%s after the patch = %q, worktree %q", f, a, b)
		}
	}

	// Between two snapshots only what changed between them.
	writeFile(t, wt.Path, "new.txt", "a\nb\nc\nd\n")
	later, err := m.Snapshot(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	delta, err := m.Changes(ctx, wt, after, later)
	if err != nil {
		t.Fatal(err)
	}
	if len(delta.Files) != 1 || delta.Files[0] != (FileStat{Path: "new.txt", Added: 1}) {
		t.Errorf("Changes between snapshots = %+v", delta)
	}
	if _, err := m.Changes(ctx, wt, "HEAD", later); err == nil {
		t.Error("Changes accepted a ref name")
	}
}

// A moved file is a rename, as git diff -M reports it.
func TestChangesRename(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"old/name.txt": strings.Repeat("line\n", 20)})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "rename")
	if err := os.Rename(filepath.Join(wt.Path, "old"), filepath.Join(wt.Path, "new")); err != nil {
		t.Fatal(err)
	}
	_, stat, err := m.Diff(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileStat{{Path: "new/name.txt", OldPath: "old/name.txt"}}
	if !slices.Equal(stat.Files, want) {
		t.Errorf("Stat = %+v, want %+v", stat.Files, want)
	}
	if got := oracleNumstat(t, wt, wt.Base, "-M"); len(got) != 1 || got["old/{name.txt => new}/name.txt"] != [2]string{"0", "0"} && got["{old => new}/name.txt"] != [2]string{"0", "0"} {
		t.Errorf("oracle saw no rename: %v", got)
	}
}

func TestDiffTooLarge(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t, func(o *Options) { o.MaxDiff = 1024 })
	wt := create(t, m, rem.dir, "big")
	writeFile(t, wt.Path, "big.txt", strings.Repeat("a line of text\n", 1000))
	patch, stat, err := m.Diff(testCtx(t), wt)
	if !errors.Is(err, ErrDiffTooLarge) || patch != nil {
		t.Fatalf("Diff = %d bytes, %v; want ErrDiffTooLarge", len(patch), err)
	}
	if stat.Added != 1000 {
		t.Errorf("Stat with the error = %+v", stat)
	}
}

func TestCommitNothing(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n", ".gitignore": "*.tmp\n"})
	m, _ := newManager(t)
	wt := create(t, m, rem.dir, "idle")
	writeFile(t, wt.Path, "ignored.tmp", "x")
	commit, changed, err := m.Commit(testCtx(t), wt, "nothing", Person{})
	if err != nil || changed || commit != wt.Base {
		t.Errorf("Commit = %s, %v, %v; want no commit, the tip %s", commit, changed, err, wt.Base)
	}
}

func mapsEqual(a, b map[string][2]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
