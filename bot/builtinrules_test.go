package bot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/mcptools"
)

// TestBuiltinRulesAllowOnlyTheBotsTools: the built-in rules allow exactly
// the bot's two tools, and a deny rule of any scope still wins (the
// permission engine decides, as for every rule).
func TestBuiltinRulesAllowOnlyTheBotsTools(t *testing.T) {
	deny := func(scope approvals.Scope, key, tool string) approvals.Rule {
		return approvals.Rule{ID: 9, Scope: scope, ScopeKey: key, Effect: approvals.EffectDeny, Tool: tool}
	}
	tests := []struct {
		name  string
		extra []approvals.Rule
		tool  string
		want  approvals.Effect
	}{
		{"send_file", nil, mcptools.SendFileTool, approvals.EffectAllow},
		{"read_thread", nil, mcptools.ReadThreadTool, approvals.EffectAllow},
		{"another tool of the server", nil, "mcp__claudeops__shell", ""},
		{"the same name on another server", nil, "mcp__other__send_file", ""},
		{"a prefix of the name", nil, "mcp__claudeops__send_file_all", ""},
		{"Bash", nil, "Bash", ""},
		{"channel deny", []approvals.Rule{deny(approvals.ScopeChannel, "C1", mcptools.SendFileTool)}, mcptools.SendFileTool, approvals.EffectDeny},
		{"thread deny", []approvals.Rule{deny(approvals.ScopeThread, "T1", mcptools.ReadThreadTool)}, mcptools.ReadThreadTool, approvals.EffectDeny},
		{"global deny of the server", []approvals.Rule{deny(approvals.ScopeGlobal, "", "mcp__claudeops__*")}, mcptools.SendFileTool, approvals.EffectDeny},
		{"another channel's deny", []approvals.Rule{deny(approvals.ScopeChannel, "C2", mcptools.SendFileTool)}, mcptools.SendFileTool, approvals.EffectAllow},
		{"deny of the other tool", []approvals.Rule{deny(approvals.ScopeChannel, "C1", mcptools.ReadThreadTool)}, mcptools.SendFileTool, approvals.EffectAllow},
	}
	for _, tt := range tests {
		rules := append(append([]approvals.Rule(nil), tt.extra...), builtinRules...)
		got, _ := approvals.EvaluateCall(rules, approvals.Call{ChannelKey: "C1", ThreadKey: "T1", Tool: tt.tool, Input: json.RawMessage(`{"path":"r.txt"}`), Cwd: "/w"})
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestConsoleBuiltinRuleForSendFile: through the real CLI, send_file runs
// without a prompt by the built-in rule, which `rules` shows. A channel
// deny rule overrides it, without a prompt either: one with a pattern in
// the bot's own evaluation (the CLI is not given such rules), one for the
// whole tool in the CLI too, which then no longer offers the tool.
func TestConsoleBuiltinRuleForSendFile(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	for name, body := range map[string]string{"report.md": "all green\n", "secret.md": "not for the thread\n"} {
		if err := os.WriteFile(filepath.Join(h.workdir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.say("rules")
	h.expect(`^\[main\] \* built in: allow mcp__claudeops__send_file \(global; a deny rule overrides it\)$`)
	h.expect(`^\[main\] \* built in: allow mcp__claudeops__read_thread \(global; a deny rule overrides it\)$`)

	from := h.cursor
	h.say("sendfile report.md")
	h.expect(`^\[main\] 📎 report\.md \(10 bytes\)$`)
	h.expect(`^\[main\] claude: tool result: Posted report\.md`)
	h.expect(`^\[main\] — ✓`)
	h.absent(from, `\? approval`)

	// The script's input is {"comment":"","path":…}, compared as JSON.
	h.say(`rules add deny mcp__claudeops__send_file({"comment":"","path":"secret.md"})`)
	h.expect(`Rule \d+: deny mcp__claudeops__send_file\(.*\) in this channel\.`)
	from = h.cursor
	h.say("sendfile secret.md")
	h.expect(`^\[main\] claude: tool result: Denied by the rule "deny mcp__claudeops__send_file`)
	h.expect(`^\[main\] — ✓`)
	h.say("sendfile report.md")
	h.expect(`^\[main\] 📎 report\.md \(10 bytes\)$`)
	h.expect(`^\[main\] — ✓`)
	h.absent(from, `📎 secret|\? approval|not for the thread`)

	h.say("rules add deny mcp__claudeops__send_file")
	h.expect(`Rule \d+: deny mcp__claudeops__send_file in this channel\.`)
	from = h.cursor
	h.say("sendfile report.md")
	// The CLI refuses it itself, by the deny rule the bot hands it: newer
	// CLIs take the tool off the list, older ones deny the call.
	h.expect(`^\[main\] claude: tool result: .*(No such tool available: mcp__claudeops__send_file|Permission to use mcp__claudeops__send_file has been denied)`)
	h.expect(`^\[main\] — ✓`)
	h.absent(from, `📎|\? approval|all green`)
}
