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

// bashTurn sends cmd, denies every can_use_tool, and reports whether the
// host was asked and whether the CLI refused the call by itself.
func bashTurn(t *testing.T, p *Process, r *recorder, from int, cmd string) (asked, cliDenied bool, res *Result, next int) {
	t.Helper()
	if err := p.SendText(cmd); err != nil {
		t.Fatal(err)
	}
	for {
		ev, i := r.waitFor(from, "can_use_tool or result for "+cmd, func(ev Event) bool { return isCanUseTool(ev) || isResult(ev) })
		from = i + 1
		if c, ok := ev.(*ControlRequest); ok {
			asked = true
			if err := p.Deny(c.RequestID, "no", false); err != nil {
				t.Fatal(err)
			}
			continue
		}
		res = ev.(*Result)
		return asked, !asked && len(res.PermissionDenials) > 0, res, from
	}
}

// classifierDecided reports a permission_denied the CLI's auto-mode
// classifier gave.
func classifierDecided(events []Event) bool {
	for _, ev := range events {
		if d, ok := ev.(*PermissionDenied); ok && d.DecisionReasonType == "classifier" {
			return true
		}
	}
	return false
}

// TestRealCLIGuardModes: in each mode a guarded session runs in, also after
// a model switch, a command that writes reaches the host; denied, it leaves
// no file, and the CLI's classifier never decides. The control: plan mode
// without the guard's settings lets the classifier refuse the call itself.
func TestRealCLIGuardModes(t *testing.T) {
	for _, mode := range []string{"default", "plan"} {
		t.Run(mode, func(t *testing.T) {
			c := newCLI(t, commandScript())
			p, r := c.start(func(o *Options) { o.Guard, o.PermissionMode = &Guard{}, mode })
			ctx := context.Background()
			from := 0
			for i, cmd := range []string{"touch pwned1", "echo x > pwned2"} {
				if i == 1 {
					if _, err := p.SetModel(ctx, "claude-haiku-4-5"); err != nil {
						t.Fatal(err)
					}
				}
				var asked bool
				var res *Result
				asked, _, res, from = bashTurn(t, p, r, from, cmd)
				if !asked || len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Bash" {
					t.Errorf("%s: the host was not asked (asked %v): %s", cmd, asked, describe(res))
				}
			}
			if reqs := c.api.Requests(); reqs[len(reqs)-1].Model != "claude-haiku-4-5" {
				t.Errorf("the model switch did not take: last request for %q", reqs[len(reqs)-1].Model)
			}
			for _, ev := range r.snapshot() {
				if si, ok := ev.(*SystemInit); ok && si.PermissionMode != mode {
					t.Errorf("a turn ran in mode %q, want %q", si.PermissionMode, mode)
				}
			}
			if classifierDecided(r.snapshot()) {
				t.Errorf("the classifier decided: %s", r.dump())
			}
			for _, f := range []string{"pwned1", "pwned2"} {
				if _, err := os.Stat(filepath.Join(c.dir, f)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: a denied write ran: %v", f, err)
				}
			}
			for _, m := range []string{"acceptEdits", "auto", "bypassPermissions", "dontAsk"} {
				if _, err := p.SetPermissionMode(ctx, m); err == nil || !strings.Contains(err.Error(), "guarded session runs in default or plan") {
					t.Errorf("SetPermissionMode(%s) in a guarded session: %v, want refused", m, err)
				}
			}
			// Behind that, the CLI refuses auto itself (disableAutoMode).
			var ce *ControlError
			if _, err := p.request(ctx, "set_permission_mode", map[string]any{"mode": "auto"}); !errors.As(err, &ce) {
				t.Errorf("set_permission_mode auto reached the CLI: %v, want refused", err)
			}
			if mode != "default" {
				return
			}
			if got, err := p.SetPermissionMode(ctx, "plan"); err != nil || got != "plan" {
				t.Errorf("SetPermissionMode(plan) = %q, %v", got, err)
			}
		})
	}
	t.Run("plan-unguarded-control", func(t *testing.T) {
		c := newCLI(t, commandScript())
		p, r := c.start(func(o *Options) { o.PermissionMode = "plan" })
		if asked, _, _, _ := bashTurn(t, p, r, 0, "touch pwned"); asked || !classifierDecided(r.snapshot()) {
			t.Errorf("without the guard plan mode asked the host (%v) or no classifier decided; the test above proves nothing: %s", asked, r.dump())
		}
	})
}

// TestRealCLIGuardIgnoresRepositorySettings: a repository's hooks and MCP
// servers do not run in a guarded session (oracle: their marker files,
// which the same repository makes appear without the guard).
func TestRealCLIGuardIgnoresRepositorySettings(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		name := map[bool]string{true: "guarded", false: "unguarded-control"}[guarded]
		t.Run(name, func(t *testing.T) {
			c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				return reply(fakeanthropic.Text("hi"))
			})
			hookMark, mcpMark := filepath.Join(c.dir, "hook-ran"), filepath.Join(c.dir, "mcp-ran")
			if err := os.MkdirAll(filepath.Join(c.dir, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			settings := `{"enableAllProjectMcpServers":true,"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ` + hookMark + `"}]}],
 "UserPromptSubmit":[{"hooks":[{"type":"command","command":"touch ` + hookMark + `"}]}]}}`
			mcp := `{"mcpServers":{"x":{"command":"sh","args":["-c","touch ` + mcpMark + `; exit 1"]}}}`
			for name, body := range map[string]string{".claude/settings.json": settings, ".claude/settings.local.json": settings, ".mcp.json": mcp} {
				if err := os.WriteFile(filepath.Join(c.dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, r := c.start(func(o *Options) {
				if guarded {
					o.Guard = &Guard{}
				}
			})
			if err := p.SendText("hello"); err != nil {
				t.Fatal(err)
			}
			r.waitFor(0, "result", isResult)
			for _, f := range []string{hookMark, mcpMark} {
				_, err := os.Stat(f)
				switch {
				case guarded && !errors.Is(err, os.ErrNotExist):
					t.Errorf("%s: repository configuration ran: %v", filepath.Base(f), err)
				case !guarded && err != nil:
					t.Errorf("%s: without the guard the repository's configuration did not run either (%v): the test proves nothing", filepath.Base(f), err)
				}
			}
		})
	}
}

// TestRealCLIApplyFlagSettings: a deny rule applied mid-session is enforced
// by the CLI itself, even for a command it would run unasked, without the
// host being asked; applying the rules again without it withdraws it, but
// not a rule given at launch. Ask rules send even read-only commands to
// the host.
func TestRealCLIApplyFlagSettings(t *testing.T) {
	c := newCLI(t, commandScript())
	p, r := c.start(func(o *Options) { o.Guard = &Guard{DenyRules: []string{"Bash(cat:*)"}} })
	ctx := context.Background()
	from := 0
	step := func(cmd string, wantAsked, wantDenied bool) {
		t.Helper()
		asked, denied, res, next := bashTurn(t, p, r, from, cmd)
		from = next
		if asked != wantAsked || denied != wantDenied {
			t.Errorf("%s: asked %v, denied by the CLI %v; want %v, %v: %s", cmd, asked, denied, wantAsked, wantDenied, describe(res))
		}
	}
	apply := func(g Guard) {
		t.Helper()
		if err := p.ApplyFlagSettings(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	step("ls", false, false)
	step("cat README.md", false, true)
	apply(Guard{DenyRules: []string{"Bash(ls:*)"}})
	step("ls -la", false, true)
	step("cat README.md", false, true)
	apply(Guard{})
	step("ls -la", false, false)
	step("cat README.md", false, true) // the launch rule stays
	apply(Guard{AskRules: []string{"Bash"}})
	step("ls", true, false)
}
