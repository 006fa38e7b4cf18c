package workspace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hookNames are hooks git runs in the operations the manager performs.
var hookNames = []string{
	"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-push", "post-checkout",
	"reference-transaction", "post-index-change", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman",
}

func installHooks(t *testing.T, dir, script string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range hookNames {
		if err := os.Symlink(script, filepath.Join(dir, h)); err != nil {
			t.Fatal(err)
		}
	}
}

// evilConfig is a git config that runs the trap from every corner git
// reads commands from.
func evilConfig(script, hooks string) string {
	return `[core]
	repositoryformatversion = 0
	fsmonitor = ` + script + `
	hooksPath = ` + hooks + `
	pager = ` + script + `
	sshCommand = ` + script + `
	editor = ` + script + `
	askPass = ` + script + `
[diff]
	external = ` + script + `
[filter "evil"]
	clean = ` + script + `
	smudge = ` + script + `
	required = true
[diff "evil"]
	command = ` + script + `
	textconv = ` + script + `
[credential]
	helper = !` + script + `
[gpg]
	program = ` + script + `
[commit]
	gpgSign = true
`
}

// (1) The worktree's .git file rewritten to point at a git directory the
// model made, whose config runs code: every operation ignores it, and acts
// on the real branch.
func TestHostileGitFileIgnored(t *testing.T) {
	tr := newTrap(t)
	rem := newRemote(t, "main", map[string]string{"app.txt": "one\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "evil-gitfile")

	evil := filepath.Join(wt.Path, "evil")
	for _, d := range []string{"objects", "refs/heads"} {
		if err := os.MkdirAll(filepath.Join(evil, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, evil, "HEAD", "ref: refs/heads/main\n")
	writeFile(t, evil, "config", evilConfig(tr.script, filepath.Join(wt.Path, "myhooks")))
	installHooks(t, filepath.Join(wt.Path, "myhooks"), tr.script)
	writeFile(t, wt.Path, ".git", "gitdir: ./evil\n")
	writeFile(t, wt.Path, ".gitattributes", "* filter=evil diff=evil\n")
	writeFile(t, wt.Path, "app.txt", "one\ntwo\n")

	// Positive control: plain git in the worktree runs the model's fsmonitor.
	_, _ = gitRun(t, nil, "-C", wt.Path, "status")
	tr.mustArm(t, "git status in the worktree")

	snap, err := m.Snapshot(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Changes(ctx, wt, wt.Base, snap); err != nil {
		t.Fatal(err)
	}
	patch, _, err := m.Diff(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(patch, []byte("+two")) {
		t.Errorf("diff lacks the change:\n%s", patch)
	}
	commit, changed, err := m.Commit(ctx, wt, "evil gitfile", Person{Name: "Mallory", Email: "m@example.org"})
	if err != nil || !changed {
		t.Fatalf("Commit = %v, %v", changed, err)
	}
	if err := m.Push(ctx, wt, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Unpushed(ctx, wt); err != nil {
		t.Fatal(err)
	}
	writeFile(t, wt.Path, "late.txt", "left behind\n")
	kept, err := m.Remove(ctx, wt)
	if err != nil || !kept {
		t.Fatalf("Remove = %v, %v; want kept", kept, err)
	}
	tr.mustNotSpring(t, "the manager")

	// The real branch got the work, the evil git directory nothing.
	if got := rem.rev(wt.Branch); got != commit {
		t.Errorf("remote branch at %s, want %s", got, commit)
	}
	if got := rem.git("show", commit+":app.txt"); got != "one\ntwo\n" {
		t.Errorf("app.txt in the commit = %q (a filter ran?)", got)
	}
	if names := rem.git("ls-tree", "--name-only", commit); strings.Contains(names, ".git\n") {
		t.Errorf("the .git file was committed:\n%s", names)
	}
	if _, err := os.Stat(filepath.Join(evil, "refs/heads/main")); err == nil {
		t.Error("a ref was written into the evil git directory")
	}
	if got := gitOK(t, "--git-dir="+filepath.Join(m.reposDir(), filepath.Base(filepath.Dir(wt.Path))), "show", wt.Branch+":late.txt"); got != "left behind\n" {
		t.Errorf("late.txt kept = %q", got)
	}
}

// (2) Drivers named by a .gitattributes of the repository, with their
// commands defined where plain git would find them (the operator's global
// config, config in the environment): none runs, content is stored raw.
func TestHostileAttributesDriversNotRun(t *testing.T) {
	tr := newTrap(t)
	rem := newRemote(t, "main", map[string]string{
		".gitattributes": "* filter=evil diff=evil merge=evil\n",
		"data.txt":       "raw\n",
	})
	home := t.TempDir()
	writeFile(t, home, ".gitconfig", evilConfig(tr.script, filepath.Join(home, "hooks")))
	writeFile(t, home, ".config/git/config", evilConfig(tr.script, filepath.Join(home, "hooks")))
	writeFile(t, home, ".config/git/attributes", "* filter=evil diff=evil\n")
	installHooks(t, filepath.Join(home, "hooks"), tr.script)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
	t.Setenv("GIT_CONFIG_COUNT", "2")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", tr.script)
	t.Setenv("GIT_CONFIG_KEY_1", "diff.external")
	t.Setenv("GIT_CONFIG_VALUE_1", tr.script)
	t.Setenv("GIT_EXTERNAL_DIFF", tr.script)
	t.Setenv("GIT_PAGER", tr.script)

	// Positive control: plain git with this environment runs the smudge filter.
	_ = plainGit(t, os.Environ(), "clone", "--quiet", rem.dir, filepath.Join(t.TempDir(), "ctl"))
	tr.mustArm(t, "git clone with the operator's config")

	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "attrs")
	if b, err := os.ReadFile(filepath.Join(wt.Path, "data.txt")); err != nil || string(b) != "raw\n" {
		t.Fatalf("checked out data.txt = %q, %v", b, err)
	}
	writeFile(t, wt.Path, "data.txt", "raw\ncooked\n")
	if _, err := m.Snapshot(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Diff(ctx, wt); err != nil {
		t.Fatal(err)
	}
	commit, _, err := m.Commit(ctx, wt, "", Person{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Push(ctx, wt, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Remove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	tr.mustNotSpring(t, "the manager")
	if got := rem.git("cat-file", "blob", commit+":data.txt"); got != "raw\ncooked\n" {
		t.Errorf("stored data.txt = %q, want the raw content", got)
	}
}

// (3) Hooks put in the clone's hooks directory, and a core.hooksPath set
// in the clone's config pointing into a worktree: not run by Create,
// Snapshot, Commit, Push or Remove.
func TestHostileHooksNotRun(t *testing.T) {
	tr := newTrap(t)
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	first := create(t, m, rem.dir, "first")
	clone := filepath.Join(m.reposDir(), filepath.Base(filepath.Dir(first.Path)))
	installHooks(t, filepath.Join(clone, "hooks"), tr.script)

	// Positive control: plain git on the clone runs the reference-transaction hook.
	gitOK(t, "--git-dir="+clone, "update-ref", "refs/probe", first.Base)
	tr.mustArm(t, "git update-ref on the clone")
	gitOK(t, "--git-dir="+clone, "update-ref", "-d", "refs/probe")
	// The clone's own config tampered with, too, beneath the check that
	// refuses such a config (hostile_config_test.go).
	installHooks(t, filepath.Join(first.Path, "myhooks"), tr.script)
	beneathCheck(t, m, clone, []string{"core.hooksPath", filepath.Join(first.Path, "myhooks")},
		[]string{"core.fsmonitor", tr.script})
	_, _ = gitRun(t, nil, "--git-dir="+clone, "--work-tree="+first.Path, "status")
	tr.mustArm(t, "git status with the tampered clone config")

	wt := create(t, m, rem.dir, "second")
	writeFile(t, wt.Path, "b.txt", "b\n")
	if _, err := m.Snapshot(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Commit(ctx, wt, "hooked?", Person{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Push(ctx, wt, ""); err != nil {
		t.Fatal(err)
	}
	writeFile(t, wt.Path, "c.txt", "c\n")
	if _, err := m.Remove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Remove(ctx, first); err != nil {
		t.Fatal(err)
	}
	tr.mustNotSpring(t, "the manager")
}

// A nested repository in the worktree (a gitlink) whose own config runs
// code: "git add" would run git in it; staging never does.
func TestHostileNestedRepositoryNotEntered(t *testing.T) {
	tr := newTrap(t)
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "nested")
	sub := filepath.Join(wt.Path, "sub")
	gitOK(t, "init", "--quiet", sub)
	writeFile(t, sub, "s.txt", "s\n")
	writeFile(t, sub, ".gitattributes", "* filter=evil\n")
	gitOK(t, "-C", sub, "add", "s.txt")
	gitOK(t, "-C", sub, "commit", "--quiet", "-m", "s")
	writeFile(t, filepath.Join(sub, ".git"), "config", evilConfig(tr.script, filepath.Join(sub, "hooks")))
	writeFile(t, wt.Path, ".gitmodules", "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n\tignore = none\n")

	// The gitlink gets committed once; then the nested tree changes.
	if _, _, err := m.Commit(ctx, wt, "with a nested repository", Person{}); err != nil {
		t.Fatal(err)
	}
	// Same size, newer time: git must hash it again, through the clean filter.
	writeFile(t, sub, "s.txt", "t\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(sub, "s.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	// Positive control: plain "git add -A" in the worktree enters it.
	_, _ = gitRun(t, nil, "-C", wt.Path, "add", "-A")
	gitOK(t, "-C", wt.Path, "reset", "--quiet")
	tr.mustArm(t, "git add -A with a nested repository")

	if _, err := m.Snapshot(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Diff(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Commit(ctx, wt, "again", Person{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Remove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	tr.mustNotSpring(t, "the manager")
}

// (4) Symlinks pointing outside are committed as links; what they point
// to is never read into a diff or a commit. A worktree replaced by a link
// is refused, and Remove deletes the link, not its target.
func TestHostileSymlinks(t *testing.T) {
	outside := t.TempDir()
	secret := "TOPSECRET-" + randomHex(8)
	writeFile(t, outside, "secret.txt", secret+"\n")
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "links")
	target := filepath.Join(outside, "secret.txt")
	for name, to := range map[string]string{"leak": target, "dirleak": outside, "passwd": "/etc/passwd"} {
		if err := os.Symlink(to, filepath.Join(wt.Path, name)); err != nil {
			t.Fatal(err)
		}
	}
	patch, stat, err := m.Diff(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(patch, []byte(secret)) || bytes.Contains(patch, []byte("root:")) {
		t.Fatalf("the diff read through a link:\n%s", patch)
	}
	if !bytes.Contains(patch, []byte("new file mode 120000")) || len(stat.Files) != 3 {
		t.Errorf("links not in the diff as links (stat %+v):\n%s", stat, patch)
	}
	commit, _, err := m.Commit(ctx, wt, "links", Person{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Push(ctx, wt, ""); err != nil {
		t.Fatal(err)
	}
	tree := rem.git("ls-tree", "-r", commit)
	for _, name := range []string{"leak", "dirleak", "passwd"} {
		if !strings.Contains(tree, "120000 blob") || !strings.Contains(tree, "\t"+name+"\n") {
			t.Errorf("%s not stored as a link:\n%s", name, tree)
		}
	}
	if strings.Contains(tree, "dirleak/") {
		t.Errorf("a linked directory was followed:\n%s", tree)
	}
	if got := rem.git("cat-file", "blob", commit+":leak"); got != target {
		t.Errorf("link blob = %q, want its target's name", got)
	}
	if got, err := gitRun(t, nil, "--git-dir="+rem.dir, "grep", "-c", secret, commit); err == nil {
		t.Errorf("the secret reached the commit: %s", got)
	}

	// The worktree directory itself swapped for a link to elsewhere.
	wt2 := create(t, m, rem.dir, "swapped")
	if err := os.Rename(wt2.Path, wt2.Path+"-moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, wt2.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Snapshot(ctx, wt2); !errors.Is(err, ErrBadWorktree) {
		t.Errorf("Snapshot through a link = %v, want ErrBadWorktree", err)
	}
	if _, _, err := m.Commit(ctx, wt2, "x", Person{}); !errors.Is(err, ErrBadWorktree) {
		t.Errorf("Commit through a link = %v, want ErrBadWorktree", err)
	}
	if _, err := m.Remove(ctx, wt2); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != secret+"\n" {
		t.Fatalf("Remove touched the link's target: %q, %v", b, err)
	}
	if _, err := os.Lstat(wt2.Path); !os.IsNotExist(err) {
		t.Errorf("the link is still there: %v", err)
	}
}
