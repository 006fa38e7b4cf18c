package docker

import (
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/runnergit"
)

// TestContainerGit: in a session's container, git works in a thread's
// worktree as a developer uses it, and nothing the session does to the
// clone makes the bot's own git run anything (internal/runnergit; its
// control, Local, runs in claudeproc's TestSandboxGit).
func TestContainerGit(t *testing.T) {
	r := testRunner(t, nil)
	runnergit.Run(t, runnergit.Bed{
		Runner: r, Isolated: true, Bin: "claude", Base: t.TempDir(),
		Env:     botEnvAt,
		Session: claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1700000000.000200"},
	})
}
