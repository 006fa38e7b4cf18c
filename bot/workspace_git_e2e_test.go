package bot

import (
	"strings"
	"testing"
)

// TestWorktreeSessionGit: in a bound channel's thread the session's own
// git works in its worktree as a developer's does (status, add, commit
// with no identity of its own, checkout -b, log), whichever runner the tests run: scripts/test runs it
// again in the sandbox, which shows the session only the parts of the
// clone the workspaces hand it (bot/workspaces, BeforeLaunch). The bot's
// push then carries the session's commit, as the remote, read by git,
// says.
func TestWorktreeSessionGit(t *testing.T) {
	h, bare, wsDir := wsHarness(t, nil)
	h.say("run git status --short --branch && echo three >> notes.txt && git add notes.txt && " +
		"git commit -q -m 'session commit' && " +
		"git checkout -q -b topic && git checkout -q - && git log --format=%s -1 && echo GIT-WORKS")
	h.say("allow " + h.expect(`\? approval (\w+): Bash`)[1])
	h.expect(`claude: GIT-WORKS`)
	h.expect(`— ✓`)
	th := threadRecord(t, h, "main")
	h.say("push")
	h.expect(`\* Pushed ` + "`" + th.Branch + "`")
	if got := gitRun(t, bare, "--git-dir", bare, "log", "-1", "--format=%s", "refs/heads/"+th.Branch); got != "session commit\n" {
		t.Errorf("the remote's branch is at %q, want the session's commit", got)
	}
	// No runner's home holds a git identity: the session commits as the
	// bot does (bot/workspaces hands it GIT_AUTHOR_* and GIT_COMMITTER_*).
	if got := gitRun(t, bare, "--git-dir", bare, "log", "-1", "--format=%an <%ae> %cn", "refs/heads/"+th.Branch); got != "claudeops <claudeops@localhost> claudeops\n" {
		t.Errorf("the session's commit is by %q, want the bot's identity", got)
	}
	if got := remoteFile(t, bare, th.Branch, "notes.txt"); got != "line one\nthree\n" {
		t.Errorf("remote notes.txt = %q", got)
	}
	clone := cloneOf(t, wsDir, th)
	if got := gitRun(t, clone, "--git-dir", clone, "branch", "--list", "topic"); !strings.Contains(got, "topic") {
		t.Errorf("checkout -b in the session made no branch topic: %q", got)
	}
}
