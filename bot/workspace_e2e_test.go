package bot

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// The repository workspaces, end to end: the console, the real CLI, the
// fake model, real git with a bare repository on disk as the remote. The
// oracle is git itself, reading the remote (or the clone) on its own.

// gitRun runs git in dir (or with --git-dir when bare) and returns its
// output; the test fails if git does.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// bareRemote makes a bare repository whose main branch holds notes.txt.
func bareRemote(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	bare, seed := filepath.Join(root, "api.git"), filepath.Join(root, "seed")
	gitRun(t, root, "init", "-q", "--bare", "-b", "main", bare)
	gitRun(t, root, "init", "-q", "-b", "main", seed)
	if err := os.WriteFile(filepath.Join(seed, "notes.txt"), []byte("line one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, seed, "add", "notes.txt")
	gitRun(t, seed, "commit", "-q", "-m", "start")
	gitRun(t, seed, "push", "-q", bare, "main")
	return bare
}

// remoteFile is path at branch in the bare repository, read by git.
func remoteFile(t *testing.T, bare, branch, path string) string {
	t.Helper()
	return gitRun(t, bare, "--git-dir", bare, "show", "refs/heads/"+branch+":"+path)
}

// wsHarness is a console harness whose channel is bound to a fresh bare
// repository by configuration.
func wsHarness(t *testing.T, mod func(*testConfig)) (*harness, string, string) {
	t.Helper()
	bare := bareRemote(t)
	wsDir := t.TempDir()
	m, err := workspace.New(workspace.Options{Dir: wsDir})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, script(nil), func(c *testConfig) {
		c.Workspace.Manager = m
		c.Workspace.Repos = []string{"console/console=" + bare}
		if mod != nil {
			mod(c)
		}
	})
	return h, bare, wsDir
}

// threadRecord reads a thread's record from the store.
func threadRecord(t *testing.T, h *harness, name string) store.Thread {
	t.Helper()
	th, ok, err := h.st.GetThread(context.Background(), "console/console/"+name)
	if err != nil || !ok {
		t.Fatalf("thread %s: ok=%v err=%v", name, ok, err)
	}
	return th
}

// TestWorktreesTwoThreadsAtOnce: two threads of one channel edit the same
// file at the same time; each works in its own worktree, and both changes
// end intact on two branches of the remote.
func TestWorktreesTwoThreadsAtOnce(t *testing.T) {
	h, bare, wsDir := wsHarness(t, nil)
	h.say("run echo from-main >> notes.txt")
	h.expect(`^\[main\] \* Working on branch ` + "`claudeops/thread-main-[0-9a-f]+`")
	idMain := h.expect(`^\[main\] \? approval (\w+): Bash`)[1]
	h.say("/thread other")
	h.say("run echo from-other >> notes.txt")
	h.expect(`^\[other\] \* Working on branch ` + "`claudeops/thread-other-[0-9a-f]+`")
	idOther := h.expect(`^\[other\] \? approval (\w+): Bash`)[1]
	// Both sessions are live and both requests pending: now both run.
	h.say("allow " + idOther)
	h.say("/thread main")
	h.say("allow " + idMain)
	// Either may end first.
	seen := map[string]bool{}
	for range 2 {
		seen[h.expect(`^\[(main|other)\] \* 📝 1 file changed, \+1 −0`)[1]] = true
	}
	if !seen["main"] || !seen["other"] {
		t.Fatalf("change summaries from %v, want main and other", seen)
	}

	main, other := threadRecord(t, h, "main"), threadRecord(t, h, "other")
	if main.Worktree == other.Worktree || main.Branch == other.Branch {
		t.Fatalf("threads share a worktree or branch: %+v / %+v", main, other)
	}
	for _, th := range []store.Thread{main, other} {
		if !strings.HasPrefix(th.Worktree, wsDir+string(os.PathSeparator)) {
			t.Errorf("worktree %s is not under the workspaces %s", th.Worktree, wsDir)
		}
	}

	h.say("diff")
	h.expect(`^\[main\] 📎 claudeops-thread-main-[0-9a-f]+\.diff`)
	h.expect(`^\[main\] .*\+from-main$`)
	h.say("commit add a line from main")
	h.expect(`^\[main\] \* Committed [0-9a-f]+ on`)
	h.say("push")
	h.expect(`^\[main\] \* Pushed ` + "`" + main.Branch + "`")
	h.say("/thread other")
	h.say("commit")
	h.expect(`^\[other\] \* Committed [0-9a-f]+ on`)
	h.say("push")
	h.expect(`^\[other\] \* Pushed`)

	if got, want := remoteFile(t, bare, main.Branch, "notes.txt"), "line one\nfrom-main\n"; got != want {
		t.Errorf("remote %s:notes.txt = %q, want %q", main.Branch, got, want)
	}
	if got, want := remoteFile(t, bare, other.Branch, "notes.txt"), "line one\nfrom-other\n"; got != want {
		t.Errorf("remote %s:notes.txt = %q, want %q", other.Branch, got, want)
	}
	if msg := gitRun(t, bare, "--git-dir", bare, "log", "-1", "--format=%B", "refs/heads/"+main.Branch); strings.TrimSpace(msg) != "add a line from main" {
		t.Errorf("commit message %q", msg)
	}
	if got := remoteFile(t, bare, "main", "notes.txt"); got != "line one\n" {
		t.Errorf("the default branch changed: %q", got)
	}
}

// TestWorktreeCommandsAreTheStarters: bob may talk in the operator's
// thread and see its diff, but not commit or push its branch.
func TestWorktreeCommandsAreTheStarters(t *testing.T) {
	h, bare, _ := wsHarness(t, nil)
	h.say("run echo x >> notes.txt")
	id := h.expect(`\? approval (\w+): Bash`)[1]
	h.say("allow " + id)
	h.expect(`📝 1 file changed`)
	for _, cmd := range []string{"commit sneaky", "push"} {
		h.say("/as bob " + cmd)
		h.expect(`Only operator \(who started this thread\) or an admin can`)
	}
	th := threadRecord(t, h, "main")
	out := gitRun(t, bare, "--git-dir", bare, "for-each-ref", "--format=%(refname)")
	if strings.Contains(out, th.Branch) {
		t.Errorf("bob's push reached the remote: %s", out)
	}
	h.say("/as bob repo /tmp")
	h.expect(`Not bound: only bot admins set repo`)

	// status: the branch for everyone, the workspaces' disk use for admins.
	from := h.cursor
	h.say("/as bob status")
	h.expect("Branch: `" + th.Branch + "` from [0-9a-f]+ · worktree ")
	h.say("help") // a line after status: bob's status has been shown whole
	h.expect(`Commands`)
	h.absent(from, `Workspaces: `)
	h.say("status")
	h.expect("Branch: `" + th.Branch + "`")
	h.expect(`^\[main\] \* Workspaces: \d+(\.\d)? [KMG]iB on disk$`)
}

// TestWorktreeNewKeepsUnpushedBranch: `new` removes the worktree; a branch
// with commits the remote lacks is kept (uncommitted work committed to it
// first), a branch with nothing of its own is deleted.
func TestWorktreeNewKeepsUnpushedBranch(t *testing.T) {
	h, _, wsDir := wsHarness(t, nil)
	h.say("run echo kept >> notes.txt")
	id := h.expect(`\? approval (\w+): Bash`)[1]
	h.say("allow " + id)
	h.expect(`📝 1 file changed`)
	th := threadRecord(t, h, "main")
	h.say("new")
	h.expect(`its worktree was removed, and the branch ` + "`" + th.Branch + "`" + ` was kept`)
	if _, err := os.Stat(th.Worktree); !os.IsNotExist(err) {
		t.Errorf("worktree %s still there: %v", th.Worktree, err)
	}
	clone := cloneOf(t, wsDir, th)
	if got := gitRun(t, clone, "--git-dir", clone, "show", "refs/heads/"+th.Branch+":notes.txt"); got != "line one\nkept\n" {
		t.Errorf("kept branch's notes.txt = %q", got)
	}

	// A fresh worktree for the next message; nothing changed there.
	h.say("hello")
	h.expect(`^\[main\] \* Working on branch`)
	h.expect(`claude: ok: `)
	th2 := threadRecord(t, h, "main")
	if th2.Worktree == "" || th2.Worktree == th.Worktree || th2.Branch == th.Branch {
		t.Fatalf("no fresh worktree: %+v", th2)
	}
	h.say("new")
	h.expect(`the branch ` + "`" + th2.Branch + "`" + ` with it`)
	if out := gitRun(t, clone, "--git-dir", clone, "for-each-ref", "--format=%(refname)", "refs/heads/"); strings.Contains(out, th2.Branch) {
		t.Errorf("an empty branch was kept: %s", out)
	}
}

// TestWorktreeStaleCleaned: a thread idle past CLAUDEOPS_WORKTREE_TTL loses
// its worktree; its unpushed work is kept on its branch and it is told.
func TestWorktreeStaleCleaned(t *testing.T) {
	homes := filepath.Join(t.TempDir(), "claude-homes")
	h, _, wsDir := wsHarness(t, func(c *testConfig) {
		c.Workspace.TTL = 2 * time.Second
		c.Workspace.Sweep = 200 * time.Millisecond
		if sb, ok := c.Runner.(claudeproc.Sandbox); ok { // CLAUDEOPS_TEST_RUNNER=sandbox
			homes = sb.HomeBase
			return
		}
		c.Runner = claudeproc.Local{HomeBase: homes}
	})
	home := claudeproc.HomeIn(homes, claudeproc.Session{Thread: "console/console/main"})
	h.say("run echo stale >> notes.txt")
	id := h.expect(`\? approval (\w+): Bash`)[1]
	h.say("allow " + id)
	h.expect(`📝 1 file changed`)
	th := threadRecord(t, h, "main")
	h.expect(`^\[main\] \* This thread was idle for 2s: its worktree was removed, and the branch ` + "`" + th.Branch + "`" + ` was kept`)
	if _, err := os.Stat(th.Worktree); !os.IsNotExist(err) {
		t.Errorf("stale worktree %s still there: %v", th.Worktree, err)
	}
	clone := cloneOf(t, wsDir, th)
	if got := gitRun(t, clone, "--git-dir", clone, "show", "refs/heads/"+th.Branch+":notes.txt"); got != "line one\nstale\n" {
		t.Errorf("kept branch's notes.txt = %q", got)
	}
	if th := threadRecord(t, h, "main"); th.Worktree != "" {
		t.Errorf("the thread still names a worktree: %+v", th)
	}
	// Its conversation cannot be resumed in another worktree: the CLI's
	// home for it goes too (a scheduled run's thread would leave one).
	testkit.WaitFor(t, waitTimeout, "the thread's CLI home removed", func() bool { _, err := os.Stat(home); return os.IsNotExist(err) })
}

// TestScheduledRunPushes: a schedule added with --push commits and pushes
// the run's branch; the run's record and its thread name it.
func TestScheduledRunPushes(t *testing.T) {
	h, bare, _ := wsHarness(t, nil)
	stop := startScheduler(t, h)
	defer stop()
	h.say("rules add allow Bash(touch:*)")
	h.expect(`\* Rule \d+: allow`)
	h.say(`schedule add "0 3 * * *" --push run touch nightly.txt`)
	id := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule run " + id)
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run + `\] \* 📝 1 file changed`)
	branch := h.expect(`^\[` + run + `\] \* Pushed branch ` + "`(claudeops/schedule-" + id + `-\d{8}-\d{4}[^` + "`" + `]*)` + "`" + ` \(commit ([0-9a-f]+)\)`)
	waitRun(t, h, id, "succeeded")
	n := int64(0)
	for _, c := range id {
		n = n*10 + int64(c-'0')
	}
	runs, err := h.st.Runs(context.Background(), n, 1)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	if runs[0].Branch != branch[1] || !strings.HasPrefix(runs[0].Commit, branch[2]) {
		t.Errorf("run record names %q at %q; the thread said %q at %q", runs[0].Branch, runs[0].Commit, branch[1], branch[2])
	}
	got := strings.TrimSpace(gitRun(t, bare, "--git-dir", bare, "rev-parse", "refs/heads/"+runs[0].Branch))
	if got != runs[0].Commit {
		t.Errorf("remote %s at %s, record says %s", runs[0].Branch, got, runs[0].Commit)
	}
	gitRun(t, bare, "--git-dir", bare, "cat-file", "-e", runs[0].Commit+":nightly.txt")
	h.say("schedule runs " + id)
	h.expect("branch `" + runs[0].Branch + "` at " + text.ShortCommit(runs[0].Commit))
}

// cloneOf finds the bot's clone of the thread's repository: the git
// directory the worktree's branch lives in, as git itself reports it.
func cloneOf(t *testing.T, root string, th store.Thread) string {
	t.Helper()
	// The worktree is gone: look for a git directory under the workspaces
	// holding the branch.
	var found string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || found != "" || !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(p, "refs", "heads")); err == nil {
			if _, err := os.Stat(filepath.Join(p, "objects")); err == nil {
				cmd := exec.Command("git", "--git-dir", p, "rev-parse", "--verify", "-q", "refs/heads/"+th.Branch)
				if cmd.Run() == nil {
					found = p
				}
				return filepath.SkipDir
			}
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no clone under %s holds %s", root, th.Branch)
	}
	return found
}
