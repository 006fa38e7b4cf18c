package claudeproc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestRealCLIPluginDir: a plugin directory the operator gives a guarded
// session (Options.PluginDirs) reaches the model: its agent is named in
// what the model is sent. The control: the same session without it.
func TestRealCLIPluginDir(t *testing.T) {
	const marker = "opsplug-skill-marker-7f3a"
	for _, given := range []bool{true, false} {
		t.Run(map[bool]string{true: "given", false: "control"}[given], func(t *testing.T) {
			c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				return reply(fakeanthropic.Text("ok"))
			})
			// In the working directory: a sandbox hides the host's /tmp.
			plug := filepath.Join(c.dir, ".opsplug")
			files := map[string]string{
				".claude-plugin/plugin.json":   `{"name": "opsplug", "version": "1.0.0", "description": "the operator's plugin"}`,
				"skills/deploy-notes/SKILL.md": "---\nname: deploy-notes\ndescription: How we deploy (" + marker + "-skill)\n---\nDeploy with care.\n",
				"agents/deployer.md":           "---\nname: deployer\ndescription: Deploys with care (" + marker + "-agent)\n---\nYou deploy.\n",
				"commands/release.md":          "---\ndescription: Cuts a release (" + marker + "-command)\n---\nCut a release.\n",
			}
			for name, body := range files {
				p := filepath.Join(plug, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, r := startMCP(c, func(o *Options) {
				if given {
					o.PluginDirs = []string{plug}
				}
			}, serve(t, mcptools.New(mcptools.Env{})))
			if err := p.SendText("hello"); err != nil {
				t.Fatal(err)
			}
			r.waitForResult(t)
			seen := map[string]bool{}
			for _, req := range c.api.Requests() {
				for _, k := range []string{"agent", "skill", "command"} {
					seen[k] = seen[k] || strings.Contains(string(req.Body), marker+"-"+k)
				}
			}
			// Its skills and commands need the Skill tool, which a guarded
			// session does not offer (tools.go): they do not reach it.
			want := map[string]bool{"agent": given, "skill": false, "command": false}
			for k, w := range want {
				if seen[k] != w {
					t.Errorf("plugin given %v: its %s reached the model %v, want %v", given, k, seen[k], w)
				}
			}
		})
	}
}
