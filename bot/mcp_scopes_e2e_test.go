package bot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/bot/mcpservers"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testmcp"
	"github.com/claudeops/claudeops/settings"
)

// An MCP server the settings give one channel starts in that channel's
// sessions and never in another's: the servers file gives it to no
// channel; the `mcp` setting of console/console (given) or of another
// channel (not given) names it. The oracle is the server's own marks.
func TestConsoleMCPSetting(t *testing.T) {
	t.Parallel()
	for _, given := range []bool{true, false} {
		t.Run(map[bool]string{true: "given", false: "other-channel"}[given], func(t *testing.T) {
			t.Parallel()
			binDir, err := os.MkdirTemp("/var/tmp", "testmcp")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(binDir) })
			bin := testmcp.Build(t, binDir)
			marks, err := os.MkdirTemp("/var/tmp", "marks")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(marks) })
			servers := filepath.Join(t.TempDir(), "servers.json")
			body := `{"mcpServers": {"ops": {"command": "` + bin + `", "args": ["-marks", "` + marks + `"]}}}`
			if err := os.WriteFile(servers, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cat, err := mcpservers.Load(mcpservers.Config{ServersFile: servers})
			if err != nil {
				t.Fatal(err)
			}
			r := settings.New(settings.Layer{}, []string{console.OperatorID})
			w := settings.Where{Platform: "console", Channel: map[bool]string{true: "console", false: "elsewhere"}[given]}
			r.SetChat(w, settings.Scope{Level: settings.LevelChannel, Key: w.ChannelKey()}, settings.MCP, "ops", console.OperatorID, time.Now())
			h := newHarness(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				return fakeanthropic.TextReply("ok")
			}, func(c *testConfig) { c.Scopes = r; c.MCP = cat })
			h.say("hello")
			h.expect(`^\[main\] — ✓`)
			h.say("mcp")
			if given {
				h.expect("`ops` \\(the channel's settings: channel console/console, set in chat by ")
			} else {
				h.expect("MCP servers of this channel's sessions: none\\.")
			}
			if given {
				// The CLI may start it beside the turn.
				testkit.WaitFor(t, waitTimeout, "the server to start", func() bool { s, _ := testmcp.Started(t, marks); return s })
			} else if started, _ := testmcp.Started(t, marks); started {
				t.Error("the server another channel was given started in this one's session")
			}
		})
	}
}
