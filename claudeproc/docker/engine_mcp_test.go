package docker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/runnermcp"
)

// TestMCPServersInContainer: the operator's stdio and http MCP servers
// reach the real CLI in a container (internal/runnermcp): their tools
// listed, asked about, run once allowed; a value full of shell text
// arrives unchanged and runs nothing; neither secret is in `docker
// inspect` (its Entrypoint is the launcher's shell, its Cmd and Env the
// CLI's), in a file below /tmp, the working directory or $HOME of the
// container, or on a command line in it.
func TestMCPServersInContainer(t *testing.T) {
	r := testRunner(t, nil)
	sess := claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1700000000.000400"}
	runnermcp.Run(t, runnermcp.Bed{
		Runner: r, Bin: "claude", Env: botEnvAt, Dir: t.TempDir(), Session: sess,
		Record: func(t *testing.T) string {
			ids := r.containers(t, sess.Thread, false)
			if len(ids) != 1 {
				t.Fatalf("running containers of the thread: %v", ids)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := r.cli.ContainerInspect(ctx, ids[0], client.ContainerInspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if e := res.Container.Config.Entrypoint; len(e) != 4 || e[0] != "/bin/sh" || e[2] != claudeproc.ImageLauncher || e[3] != "claude" ||
				!strings.Contains(strings.Join(res.Container.Config.Cmd, " "), "--mcp-config "+claudeproc.MCPConfigPath) {
				t.Errorf("entrypoint %q cmd %q, want the launcher's and the CLI's", e, res.Container.Config.Cmd)
			}
			raw, _ := json.Marshal(res.Container)
			return string(raw)
		},
	})
}
