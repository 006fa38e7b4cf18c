package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/bot/mcpservers"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// A plugin the servers file gives one channel reaches that channel's
// sessions as the bot builds it and never another's: given, its skill is
// listed as opsplug:notes, the model calls it and its body reaches the
// next request, its agent is listed as opsplug:deployer, and `mcp` names
// it; in another channel none of it reaches the model. In both, the
// skill's allowed-tools: Bash does not let the next Bash run unasked: the
// console shows the approval and the command never runs. Oracles: the
// fake model API's log, the prompt shown, a marker file.
func TestConsolePluginForChannel(t *testing.T) {
	t.Parallel()
	for _, given := range []bool{true, false} {
		t.Run(map[bool]string{true: "given", false: "other-channel"}[given], func(t *testing.T) {
			t.Parallel()
			plug := t.TempDir()
			pwned := filepath.Join(t.TempDir(), "pwned")
			for name, body := range map[string]string{
				".claude-plugin/plugin.json": `{"name": "opsplug"}`,
				"skills/notes/SKILL.md":      "---\nname: notes\ndescription: Deploy notes MARK_PLUG_DESC\nallowed-tools: Bash\n---\nMARK_PLUG_BODY $ARGUMENTS\n",
				"agents/deployer.md":         "---\nname: deployer\ndescription: Deploys MARK_PLUG_AGENT\n---\nYou deploy.\n",
			} {
				p := filepath.Join(plug, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			servers := filepath.Join(t.TempDir(), "servers.json")
			channel := map[bool]string{true: "console", false: "elsewhere"}[given]
			if err := os.WriteFile(servers, []byte(`{"plugins": [{"dir": "`+plug+`", "channels": ["`+channel+`"]}]}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cat, err := mcpservers.Load(mcpservers.Config{ServersFile: servers})
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				if req.IsProbe() || !strings.Contains(string(req.Body), "use the plugin") {
					return fakeanthropic.TextReply("ok")
				}
				n := 0 // the tool results of the whole conversation
				for _, m := range req.Messages {
					for _, b := range m.Content {
						if b.Type == "tool_result" {
							n++
						}
					}
				}
				switch n {
				case 0:
					return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Skill", map[string]string{"skill": "opsplug:notes", "args": "prod"})}}
				case 1:
					return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch " + pwned, "description": "x"})}}
				}
				return fakeanthropic.TextReply("plugin done")
			}, func(c *testConfig) { c.MCP = cat; c.SkillsBase = t.TempDir() })
			h.say("use the plugin")
			h.expect(`\? approval \w+: Bash wants to run`)
			h.say("deny")
			h.expect(`plugin done`)
			h.expect(`— ✓`)
			h.say("mcp")
			if given {
				h.expect("Plugins of this channel's sessions \\(the bot's configuration\\): `opsplug`")
			} else {
				h.expect("Plugins of this channel's sessions: none\\.")
			}
			var sent string
			for _, r := range h.api.Requests() {
				sent += string(r.Body)
			}
			for _, m := range []string{"MARK_PLUG_DESC", "opsplug:deployer", "MARK_PLUG_AGENT", "MARK_PLUG_BODY prod"} {
				if strings.Contains(sent, m) != given {
					t.Errorf("plugin given %v: %s reached the model %v", given, m, !given)
				}
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Errorf("the Bash call after the skill with allowed-tools: Bash ran")
			}
		})
	}
}
