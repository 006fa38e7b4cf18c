package runnergit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/workspace"
)

// hookNames are the hooks a planted hook directory holds: those a commit,
// a checkout, a ref update or a push would run.
const hookNames = "pre-commit prepare-commit-msg commit-msg post-commit post-checkout reference-transaction pre-push post-index-change"

// legit is what a developer does in a worktree; it ends with LEGIT-OK.
const legit = `git status --short --branch && echo hello > hello.txt && git add hello.txt &&
git -c user.name=Session -c user.email=session@example.invalid commit -q -m 'session commit' &&
git log --format=%s -1 && git diff --stat HEAD~1 HEAD && echo more >> README && git diff --stat &&
git checkout -q -b topic && git checkout -q claudeops/a && git stash -q && git stash pop -q &&
git status --short && echo LEGIT-OK`

// hostile tries, from inside the session, each way to make a later git
// call of the bot's run a program that would touch a file in MARKS (a
// directory the session cannot write: only a program run on the host
// would mark it), and to reach what is not its own.
const hostile = `G=$(git rev-parse --path-format=absolute --git-common-dir); A=$(git rev-parse --path-format=absolute --git-dir); M=MARKS
echo "== push"; git push origin HEAD:refs/heads/pwned-from-session 2>&1
echo "== fsmonitor"; git config core.fsmonitor "touch $M/fsmonitor" 2>&1
echo "== hooksPath"; mkdir -p evil-hooks; for h in HOOKS; do printf '#!/bin/sh\ntouch %s/hookspath\n' "$M" > evil-hooks/$h; chmod +x evil-hooks/$h; done
git config core.hooksPath "$PWD/evil-hooks" 2>&1
echo "== filter"; printf '* filter=x diff=x\n' > .gitattributes
git config filter.x.clean "touch $M/filter; cat" 2>&1; git config filter.x.process "touch $M/filter-process" 2>&1
git config diff.x.textconv "touch $M/textconv; cat" 2>&1
echo "== alias"; git config alias.commit-tree "!touch $M/alias" 2>&1
echo "== include"; printf '[core]\n\tfsmonitor = touch %s/include\n' "$M" > evil.cfg
git config include.path "$PWD/evil.cfg" 2>&1; git config includeIf.gitdir:/.path "$PWD/evil.cfg" 2>&1
echo "== config written by hand"; printf '[core]\n\tfsmonitor = touch %s/config-write\n' "$M" >> "$G/config" 2>&1
echo "== worktree config"; git config extensions.worktreeConfig true 2>&1
printf '[core]\n\tfsmonitor = touch %s/worktree-config\n\thooksPath = %s/evil-hooks\n' "$M" "$PWD" > "$A/config.worktree" 2>&1
echo "== clone hooks"; mkdir -p "$G/hooks" 2>&1; for h in HOOKS; do printf '#!/bin/sh\ntouch %s/clone-hook\n' "$M" > "$G/hooks/$h" 2>&1; done
echo "hooks seen: $(ls -A "$G/hooks" 2>/dev/null | wc -l)"
echo "== other thread"; ls -A "$G/worktrees" 2>&1; printf 'ref: refs/heads/main\n' > "$G/worktrees/b/HEAD" 2>&1
echo "== alternates"; echo "$PWD" > "$G/objects/info/alternates" 2>&1
echo "== the bot's files moved"; mv "$G/config" "$G/config.old" 2>&1; rmdir "$G/config.lock" 2>&1; mv "$G/hooks" "$G/hooks.old" 2>&1
printf '*\n' > "$G/info/exclude" 2>&1; printf 'ref: refs/heads/pwned\n' > "$G/HEAD" 2>&1
echo "== a commondir beside the config"; echo "$PWD" > "$G/commondir" 2>&1
echo "== links the bot's git would follow"; ln -sf "$M/../reflog-target" "$G/packed-refs" 2>&1
mkdir -p "$G/logs/refs/heads/claudeops" && ln -sf "$M/../reflog-target" "$G/logs/refs/heads/claudeops/a" 2>&1
ln -s "$M" "$G/objects/zz" 2>&1
echo HOSTILE-DONE`

// Run is the scenario the package doc describes.
func Run(t *testing.T, b Bed) {
	ctx := context.Background()
	remote := newRemote(t, b.Base)
	marks := filepath.Join(b.Base, "markers")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := workspace.New(workspace.Options{Dir: filepath.Join(b.Base, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Create(ctx, remote, "a")
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.Create(ctx, remote, "b")
	if err != nil {
		t.Fatal(err)
	}
	clone := cloneOf(t, a)
	plantHooks(t, clone)
	// What the bot shows the session, made (logs/) before the session's
	// user is given the clone.
	dirs, err := m.SessionDirs(a)
	if err != nil {
		t.Fatalf("session directories: %v", err)
	}
	if b.Own != nil {
		b.Own(t, clone, a.Path, other.Path)
	}
	s := start(t, b, a, dirs)

	out := s.bash(legit)
	t.Logf("the developer's commands printed:\n%s", out)
	checkLegit(t, b, clone, a, out)
	s.checkRepoSetup(a.Path)

	config, otherHead := read(t, filepath.Join(clone, "config")), read(t, filepath.Join(clone, "worktrees", "b", "HEAD"))
	out = s.bash(strings.NewReplacer("MARKS", marks, "HOOKS", hookNames).Replace(hostile))
	t.Logf("the hostile commands printed:\n%s", out)
	if !strings.Contains(out, "HOSTILE-DONE") {
		t.Fatalf("the hostile commands did not run to their end: %s", out)
	}
	if b.Isolated {
		// Not even in the session's own view: its git runs no hook.
		if !strings.Contains(out, "hooks seen: 0\n") {
			t.Errorf("the session sees hooks in the clone's hooks/")
		}
		checkHeld(t, clone, config, otherHead)
	} else if got, err := os.ReadFile(filepath.Join(clone, "config")); err == nil && bytes.Equal(got, config) {
		t.Errorf("control: under Local the session wrote or moved the clone's config, but the oracle saw no change")
	}
	target := filepath.Join(b.Base, "reflog-target")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	botWorks(t, m, a)
	if got := read(t, target); len(got) > 0 {
		t.Errorf("the bot's git wrote through a link the session planted: %q", got)
	}
	if left, _ := os.ReadDir(marks); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("a program planted by the session ran on the host: %v", names)
	}
	checkRemote(t, remote, clone, b.Isolated)
}

// cloneOf is the clone wt's ".git" file names, read before any session
// could change it.
func cloneOf(t *testing.T, wt workspace.Worktree) string {
	t.Helper()
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(read(t, filepath.Join(wt.Path, ".git")))), "gitdir: ")
	if !ok {
		t.Fatalf("%s/.git holds no gitdir", wt.Path)
	}
	return filepath.Dir(filepath.Dir(gitdir))
}

// plantHooks stands in for a hook a session of the local runner could
// have put in the clone's hooks/: it marks the worktree it runs in.
func plantHooks(t *testing.T, clone string) {
	t.Helper()
	hooks := filepath.Join(clone, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range strings.Fields(hookNames) {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\ntouch \"$PWD/planted-hook-ran\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// checkLegit: the session's commit is on the thread's branch and topic
// was made, as the clone (read by the real git) says; a hook planted in
// the clone ran in the session's git only under Local.
func checkLegit(t *testing.T, b Bed, clone string, a workspace.Worktree, out string) {
	t.Helper()
	if !strings.Contains(out, "LEGIT-OK") {
		t.Fatalf("git did not work in the session: %s", out)
	}
	if got := git(t, "--git-dir", clone, "log", "-1", "--format=%s", "refs/heads/"+a.Branch); got != "session commit" {
		t.Errorf("the thread's branch is at %q, want the session's commit", got)
	}
	if _, err := gitOK("--git-dir", clone, "rev-parse", "--verify", "-q", "refs/heads/topic"); err != nil {
		t.Errorf("checkout -b in the session made no branch topic in the clone")
	}
	ran := filepath.Join(a.Path, "planted-hook-ran")
	if _, err := os.Stat(ran); (err == nil) == b.Isolated {
		t.Errorf("a hook planted in the clone's hooks/ ran in the session: %v (want it to run only under Local, the control)", err == nil)
	}
	_ = os.Remove(ran)
}

// checkHeld: what the session wrote reached none of the clone's parts the
// bot's git reads as its own.
func checkHeld(t *testing.T, clone string, config, otherHead []byte) {
	t.Helper()
	if got := read(t, filepath.Join(clone, "config")); !bytes.Equal(got, config) {
		t.Errorf("the session changed the clone's config:\n%s", got)
	}
	if got := read(t, filepath.Join(clone, "worktrees", "b", "HEAD")); !bytes.Equal(got, otherHead) {
		t.Errorf("the session changed another thread's HEAD: %s", got)
	}
	for _, p := range []string{"objects/info/alternates", "config.old", "hooks.old", "info/exclude"} {
		if _, err := os.Lstat(filepath.Join(clone, p)); err == nil {
			t.Errorf("the session wrote or moved the clone's %s", p)
		}
	}
	if fi, err := os.Lstat(filepath.Join(clone, "config.lock")); err != nil || !fi.IsDir() {
		t.Errorf("the session removed the clone's config.lock: %v", err)
	}
	if got := read(t, filepath.Join(clone, "HEAD")); bytes.Contains(got, []byte("pwned")) {
		t.Errorf("the session wrote the clone's HEAD")
	}
	for _, h := range strings.Fields(hookNames) {
		if got := read(t, filepath.Join(clone, "hooks", h)); bytes.Contains(got, []byte("clone-hook")) {
			t.Errorf("the session planted a hook in the clone: %s", h)
		}
	}
}

// botWorks runs the bot's snapshot, diff, commit and push after the
// attack: a configuration file beside the clone's (config.worktree) is
// refused once and removed, as package workspace does, and then every
// call works.
func botWorks(t *testing.T, m *workspace.Manager, a workspace.Worktree) {
	t.Helper()
	ctx := context.Background()
	_, err := m.Snapshot(ctx, a)
	if errors.Is(err, workspace.ErrTampered) {
		t.Logf("the bot's first call after the attack: %v", err)
		_, err = m.Snapshot(ctx, a)
	}
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if patch, _, err := m.Diff(ctx, a); err != nil || !bytes.Contains(patch, []byte("+more")) {
		t.Fatalf("diff: %v\n%s", err, patch)
	}
	if _, changed, err := m.Commit(ctx, a, "bot commit", workspace.Person{}); err != nil || !changed {
		t.Fatalf("commit: changed %v, %v", changed, err)
	}
	if err := m.Push(ctx, a, ""); err != nil {
		t.Fatalf("push: %v", err)
	}
}

// checkRemote: the bot's push carried the session's commit; the session's
// own push reached nothing from an isolated runner (under Local, the
// control, a session runs as the bot's user and a file remote takes it).
func checkRemote(t *testing.T, remote, clone string, isolated bool) {
	t.Helper()
	session := git(t, "--git-dir", clone, "rev-parse", "refs/heads/claudeops/a~1")
	if got := git(t, "--git-dir", remote, "log", "-1", "--format=%s", "refs/heads/claudeops/a~1"); got != "session commit" {
		t.Errorf("the remote's branch below the bot's commit is %q, want the session's commit", got)
	}
	if _, err := gitOK("--git-dir", remote, "merge-base", "--is-ancestor", session, "refs/heads/claudeops/a"); err != nil {
		t.Errorf("the bot's push did not carry the session's commit %s", session)
	}
	if _, err := gitOK("--git-dir", remote, "rev-parse", "--verify", "-q", "refs/heads/pwned-from-session"); (err == nil) == isolated {
		t.Errorf("the session's own push reached the remote: %v (want it to only under Local, the control)", err == nil)
	}
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
