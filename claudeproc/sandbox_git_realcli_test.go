package claudeproc_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/runnergit"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
)

// TestSandboxGit: in a sandboxed session, git works in a thread's worktree
// as a developer uses it, and nothing the session does to the clone makes
// the bot's own git run anything (internal/runnergit). Local is the
// control: there the same commands reach the clone's hooks, config and
// the remote, so the oracles can see them.
func TestSandboxGit(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "sandbox"}[sandboxed], func(t *testing.T) {
			bin := testcli.Bin(t)
			var runner claudeproc.Runner = claudeproc.Local{}
			// Outside /tmp: the sandbox has a /tmp of its own.
			base, err := os.MkdirTemp("/var/tmp", "claudeops-sandbox-git-")
			if err != nil {
				t.Fatalf("need a directory outside /tmp: %v", err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			work := filepath.Join(base, "work")
			if err := os.Mkdir(work, 0o700); err != nil {
				t.Fatal(err)
			}
			if sandboxed {
				testcli.Bwrap(t)
				runner = claudeproc.Sandbox{HomeBase: filepath.Join(base, "homes")}
			}
			home := t.TempDir()
			runnergit.Run(t, runnergit.Bed{
				Runner: runner, Isolated: sandboxed, Bin: bin, Base: work,
				Env: func(url string) []string {
					return claudeproc.BuildEnv(testkit.CLIEnv(home, url, "CLAUDE_CODE_MAX_RETRIES=1"), nil)
				},
				Session: claudeproc.Session{Channel: "console/git", Thread: "console/git/1"},
			})
		})
	}
}
