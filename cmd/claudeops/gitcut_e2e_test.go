package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// bareGit runs the real git as the test's oracle, apart from the bot.
func bareGit(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=O", "GIT_AUTHOR_EMAIL=o@example.org", "GIT_COMMITTER_NAME=O", "GIT_COMMITTER_EMAIL=o@example.org"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %q: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// The real bot, killed with SIGKILL while `push` waits on a slow remote:
// no git of it runs on (/proc), the restarted bot does not say the push
// "was not run", asks the remote and says what it found, and the retried
// push goes through (the remote's refs read with the real git).
func TestKill9MidPushThenRestart(t *testing.T) {
	for _, tc := range []struct {
		name, receive string
		told          string // the restarted bot's line, after "pushing `<branch>` (commit <c>): "
		landed        bool
	}{
		{"cut before the remote took it", "before 30", `not pushed \(checked: the remote has no branch ` + "`" + `claudeops/thread-main-[0-9a-f]+` + "`" + `\)\. ` + "`push`" + ` sends it again\.`, false},
		{"cut after the remote took it", "after 30", `pushed \(checked: origin/claudeops/thread-main-[0-9a-f]+ is at COMMIT\)\.`, true},
	} {
		t.Run(tc.name, func(t *testing.T) { kill9MidPush(t, tc.receive, tc.told, tc.landed) })
	}
}

func kill9MidPush(t *testing.T, receive, told string, landed bool) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(context.Context, *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted")}}
	})
	bare := filepath.Join(t.TempDir(), "remote.git")
	bareGit(t, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	seed := filepath.Join(t.TempDir(), "seed")
	bareGit(t, "clone", "--quiet", bare, seed)
	bareGit(t, "-C", seed, "commit", "--quiet", "--allow-empty", "-m", "initial")
	bareGit(t, "-C", seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	rem := testkit.NewSlowRemote(t, bare)

	home, work, ws := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "workspaces")
	gitHome := "HOME=" + filepath.Join(ws, "home") // every git the bot runs has it
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_DB="+filepath.Join(t.TempDir(), "claudeops.db"), "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"CLAUDEOPS_WORKSPACES="+ws, "CLAUDEOPS_REPOS=console/console="+rem.URL, "CLAUDEOPS_LOG_LEVEL=debug",
	)
	env = append(env, rem.Env()...)
	env = append(env, testrunner.Env(t, home)...)
	t.Cleanup(func() { // whatever a failure left
		for _, pid := range append(processesWithEnv("HOME="+home), processesWithEnv(gitHome)...) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	b := startBotProc(t, env)
	b.say("hello")
	branch := b.expect("^\\[main\\] . Working on branch `(claudeops/thread-main-[0-9a-f]+)`")[1]
	b.expect(`^\[main\] claude: noted$`)
	b.expect(`^\[main\] — ✓`)
	trees, _ := filepath.Glob(filepath.Join(ws, "trees", "*", strings.TrimPrefix(branch, "claudeops/")))
	if len(trees) != 1 {
		t.Fatalf("the thread's worktree: %v", trees)
	}
	if err := os.WriteFile(filepath.Join(trees[0], "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.say("commit")
	b.expect(`^\[main\] . Committed [0-9a-f]+ on ` + "`" + regexp.QuoteMeta(branch) + "`")
	commit := bareGit(t, "--git-dir="+filepath.Join(ws, "repos", filepath.Base(filepath.Dir(trees[0]))), "rev-parse", "refs/heads/"+branch)

	rem.Set(t, "receive", receive)
	b.say("push")
	testkit.WaitFor(t, 30*time.Second, "the push to reach the slow remote", func() bool { return rem.Started("receive") })
	if landed {
		testkit.WaitFor(t, 10*time.Second, "the remote to take the push", func() bool { return remoteAt(t, bare, branch) == commit })
	}
	gits := processesWithEnv(gitHome)
	if len(gits) == 0 {
		t.Fatal("no git of the bot runs during the push")
	}
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.done
	_ = b.cmd.Wait()
	testkit.WaitForf(t, 5*time.Second, func() bool { return len(processesWithEnv(gitHome)) == 0 },
		func() string {
			return "git processes of the killed bot still run:\n" + procList(processesWithEnv(gitHome))
		})
	if got := remoteAt(t, bare, branch) == commit; got != landed {
		t.Fatalf("the remote has the commit: %v, want %v", got, landed)
	}

	b2 := startBotProc(t, env)
	b2.expect(`^\[main\] . The bot restarted while pushing ` + "`" + regexp.QuoteMeta(branch) + "`" + ` \(commit ` + commit[:10] + `\): ` +
		strings.ReplaceAll(told, "COMMIT", commit[:10]) + `$`)
	rem.Set(t, "receive", "")
	b2.say("push")
	if landed {
		b2.expect(`^\[main\] . Nothing to push: `)
	} else {
		b2.expect(`^\[main\] . Pushed ` + "`" + regexp.QuoteMeta(branch) + "`" + ` to the remote \(1 commit;`)
	}
	if got := remoteAt(t, bare, branch); got != commit {
		t.Fatalf("after the retried push the remote is at %q, want %s", got, commit)
	}
	_ = b2.endInput(90 * time.Second)
	b2.mu.Lock()
	defer b2.mu.Unlock()
	if i := slices.IndexFunc(b2.lines, func(l string) bool { return strings.Contains(l, "not run") }); i >= 0 {
		t.Errorf("the restarted bot said the push was not run: %q", b2.lines[i])
	}
}

// remoteAt is the remote's branch, as the real git reads it ("" for none).
func remoteAt(t *testing.T, bare, branch string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir="+bare, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
