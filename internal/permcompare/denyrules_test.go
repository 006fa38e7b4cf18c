package permcompare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/claudeproc"
)

// TestCLIDenyRulesEnforced hands the real CLI deny rules translated by
// approvals.CLIDenyRulesIn and checks that it refuses, by itself, every
// call those rules deny here, and (but for the broader readings
// CLIDenyRulesIn documents) nothing else.
func TestCLIDenyRulesEnforced(t *testing.T) {
	specs := []string{"Bash(rm:*)", "Bash(git push:*)", "Read(secret/**)", "Edit(src/*.go)", "WebFetch(domain:evil.example)", "Read(../sibling/**)", "Read(/etc/shadow)"}
	var rules []approvals.Rule
	for _, spec := range specs {
		tool, pattern, err := approvals.ParseRule(spec)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, approvals.Rule{Scope: approvals.ScopeChannel, ScopeKey: "C", Effect: approvals.EffectDeny, Tool: tool, Pattern: pattern})
	}
	// The session's directories exist only once it starts: the rules are
	// applied then, as the bot does for a change of rules.
	s := newSession(t, engineOurs, nil)
	cli := approvals.CLIDenyRulesIn(rules, "C", "T", s.work)
	t.Logf("CLI deny rules: %q", cli)
	for _, f := range []string{"secret/k", "src/a.go", "../sibling/y"} {
		p := filepath.Join(s.work, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.p.ApplyFlagSettings(t.Context(), claudeproc.Guard{DenyRules: cli}); err != nil {
		t.Fatal(err)
	}
	w := s.work
	tests := []struct {
		call    toolCall
		broader bool // the CLI denies it though the rules here do not
	}{
		{call: toolCall{"Bash", map[string]string{"command": "rm -f nothing"}}},
		{call: toolCall{"Bash", map[string]string{"command": "echo a; 'rm' -f x"}}},
		{call: toolCall{"Bash", map[string]string{"command": "git push origin main"}}},
		{call: toolCall{"Bash", map[string]string{"command": "ls"}}},
		{call: toolCall{"Read", map[string]string{"file_path": w + "/secret/k"}}},
		{call: toolCall{"Read", map[string]string{"file_path": w + "/README.md"}}},
		{call: toolCall{"Read", map[string]string{"file_path": w + "/../sibling/y"}}},
		{call: toolCall{"Read", map[string]string{"file_path": "/etc/shadow"}}},
		// Outside the working directory the CLI refuses the file tools
		// by itself (--restricted), whatever the rules.
		{call: toolCall{"Read", map[string]string{"file_path": "/etc/hostname"}}, broader: true},
		{call: toolCall{"Edit", map[string]string{"file_path": w + "/src/a.go", "old_string": "a", "new_string": "b"}}},
		{call: toolCall{"Edit", map[string]string{"file_path": w + "/a.go", "old_string": "a", "new_string": "b"}}},
		{call: toolCall{"Write", map[string]string{"file_path": w + "/src/a.go", "content": "x"}}, broader: true},
		{call: toolCall{"WebFetch", map[string]string{"url": "https://evil.example/x", "prompt": "p"}}},
		{call: toolCall{"WebFetch", map[string]string{"url": "https://api.EVIL.example/x", "prompt": "p"}}},
		{call: toolCall{"WebFetch", map[string]string{"url": "https://good.example/", "prompt": "p"}}},
	}
	for _, tt := range tests {
		in, _ := json.Marshal(tt.call.input)
		eff, _ := approvals.Evaluate(rules, "C", "T", tt.call.name, in, w)
		ours := eff == approvals.EffectDeny
		o := s.runCall(tt.call, func(json.RawMessage) bool { return false })
		if o.err != "" {
			t.Fatalf("%s %s: %s", tt.call.name, in, o.err)
		}
		switch {
		case ours && !o.cliDenied:
			t.Errorf("%s %s: denied here, but the CLI did not refuse it (asked %v, ran %v)", tt.call.name, in, o.asked, o.ran)
		case !ours && o.cliDenied && !tt.broader:
			t.Errorf("%s %s: the CLI refused a call no rule here denies", tt.call.name, in)
		case !ours && !o.cliDenied && tt.broader:
			t.Errorf("%s %s: the CLI no longer reads the rules more broadly; update CLIDenyRulesIn's doc", tt.call.name, in)
		}
	}
}
