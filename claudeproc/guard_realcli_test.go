package claudeproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// commandScript asks to run, via Bash, the last thing the user typed.
func commandScript() fakeanthropic.Script {
	return func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return reply(fakeanthropic.Text("tool said: " + trs[0].Content))
		}
		return reply(fakeanthropic.ToolUse("Bash", map[string]string{"command": req.LastUserText(), "description": "as asked"}))
	}
}

// TestRealCLIGuardModes: in each mode a guarded session runs in, also after
// a model switch, a command that writes reaches the host; denied, it leaves
// no file, and the CLI's classifier never decides.
func TestRealCLIGuardModes(t *testing.T) {
	for _, mode := range []string{"default", "plan"} {
		t.Run(mode, func(t *testing.T) {
			c := newCLI(t, commandScript())
			p, r := c.start(func(o *Options) { o.Guard, o.PermissionMode = &Guard{}, mode })
			from := 0
			for i, cmd := range []string{"touch pwned1", "echo x > pwned2"} {
				if i == 1 {
					if _, err := p.SetModel(context.Background(), "claude-haiku-4-5"); err != nil {
						t.Fatal(err)
					}
				}
				if err := p.SendText(cmd); err != nil {
					t.Fatal(err)
				}
				ev, n := r.waitFor(from, "can_use_tool for "+cmd, isCanUseTool)
				if err := p.Deny(ev.(*ControlRequest).RequestID, "no", false); err != nil {
					t.Fatal(err)
				}
				ev, from = r.waitFor(n, "result", isResult)
				for _, d := range ev.(*Result).PermissionDenials {
					if d.ToolName != "Bash" {
						t.Errorf("unexpected denial %+v", d)
					}
				}
				if strings.Contains(r.dump(), "classifier") {
					t.Errorf("the classifier decided: %s", r.dump())
				}
			}
			for _, f := range []string{"pwned1", "pwned2"} {
				if _, err := os.Stat(filepath.Join(c.dir, f)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: a denied write ran: %v", f, err)
				}
			}
		})
	}
}

// TestRealCLIGuardIgnoresRepositorySettings: a repository's hooks and MCP
// servers do not run in a guarded session (oracle: their marker files).
func TestRealCLIGuardIgnoresRepositorySettings(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return reply(fakeanthropic.Text("hi"))
	})
	hookMark, mcpMark := filepath.Join(c.dir, "hook-ran"), filepath.Join(c.dir, "mcp-ran")
	if err := os.MkdirAll(filepath.Join(c.dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"enableAllProjectMcpServers":true,"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ` + hookMark + `"}]}],
 "UserPromptSubmit":[{"hooks":[{"type":"command","command":"touch ` + hookMark + `"}]}]}}`
	mcp := `{"mcpServers":{"x":{"command":"sh","args":["-c","touch ` + mcpMark + `; sleep 5"]}}}`
	for name, body := range map[string]string{".claude/settings.json": settings, ".claude/settings.local.json": settings, ".mcp.json": mcp} {
		if err := os.WriteFile(filepath.Join(c.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, r := c.start(func(o *Options) { o.Guard = &Guard{} })
	if err := p.SendText("hello"); err != nil {
		t.Fatal(err)
	}
	r.waitFor(0, "result", isResult)
	for _, f := range []string{hookMark, mcpMark} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: repository configuration ran: %v", filepath.Base(f), err)
		}
	}
}

// TestRealCLIApplyFlagSettingsDenies: a deny rule applied mid-session is
// enforced by the CLI itself, even for a command it would run unasked.
func TestRealCLIApplyFlagSettingsDenies(t *testing.T) {
	c := newCLI(t, commandScript())
	p, r := c.start(func(o *Options) { o.Guard = &Guard{} })
	if err := p.ApplyFlagSettings(context.Background(), Guard{DenyRules: []string{"Bash(ls:*)"}}); err != nil {
		t.Fatal(err)
	}
	if err := p.SendText("ls -la"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "result", isResult)
	res := ev.(*Result)
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Bash" {
		t.Errorf("ls was not denied by the CLI: %s", describe(res))
	}
	for _, e := range r.snapshot() {
		if isCanUseTool(e) {
			t.Errorf("the denied command reached the host")
		}
	}
	// Withdrawing a rule does not reach a live 2.1.330 session (measured:
	// ls stays denied after applying an empty list): the bot restarts
	// the process instead, see ApplyFlagSettings.
}
