package kubernetes

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/runnergit"
)

// TestPodGit: in a session's Pod, git works in a thread's worktree as a
// developer uses it, and nothing the session does to the clone makes the
// bot's own git run anything (internal/runnergit; its control, Local,
// runs in claudeproc's TestSandboxGit). The Pod runs as another user than
// the test: what the bot made for the session is given to that user, as
// a bot running as the Pods' user (the deployment's) would have made it.
func TestPodGit(t *testing.T) {
	b := newModelBed(t, "sk-test")
	base := filepath.Join(b.claim, "git")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	runnergit.Run(t, runnergit.Bed{
		Runner: b.r, Isolated: true, Bin: "claude", Base: base,
		Env: func(url string) []string {
			return []string{"ANTHROPIC_BASE_URL=" + url, "LANG=C.UTF-8", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
		},
		Own:     givePodUser,
		Session: claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1700000000.000300"},
	})
}

// givePodUser gives the Pods' user everything below paths.
func givePodUser(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		err := filepath.WalkDir(p, func(q string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(q, podUID, podUID)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
