package kubernetes

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/runnermcp"
)

// TestPodMCPServers: the operator's stdio and http MCP servers reach the
// real CLI in a Pod (internal/runnermcp): their tools listed, asked
// about, run once allowed; a value full of shell text arrives unchanged
// and runs nothing; neither secret is in the Pod object read back from
// the API (its command is the launcher's, its args the CLI's), in a file
// below /tmp, the working directory or $HOME of the Pod, or on a command
// line in it.
func TestPodMCPServers(t *testing.T) {
	b := newModelBed(t, "sk-test")
	sess := claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1700000000.000500"}
	runnermcp.Run(t, runnermcp.Bed{
		Runner: b.r, Bin: "claude", Dir: b.workDir(t, "mcp"), Own: givePodUser, Session: sess,
		Env: func(url string) []string {
			return []string{"ANTHROPIC_BASE_URL=" + url, "LANG=C.UTF-8", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
		},
		Record: func(t *testing.T) string {
			pods := b.pods(t, LabelThread+"="+Hash(sess.Thread))
			if len(pods) != 1 {
				t.Fatalf("%d Pods of the thread, want 1", len(pods))
			}
			c := pods[0].Spec.Containers[0]
			if len(c.Command) != 3 || c.Command[2] != claudeproc.ImageLauncher || c.Args[0] != "claude" ||
				!strings.Contains(strings.Join(c.Args, " "), "--mcp-config "+claudeproc.MCPConfigPath) {
				t.Errorf("command %q args %q, want the launcher's and the CLI's", c.Command, c.Args)
			}
			raw, _ := json.Marshal(pods[0])
			return string(raw)
		},
	})
}
