package approvals

import (
	"slices"
	"testing"
)

func TestCLIDenyRules(t *testing.T) {
	rules := []Rule{
		{Scope: ScopeGlobal, Effect: EffectDeny, Tool: "Bash", Pattern: "rm -rf:*"},
		{Scope: ScopeChannel, ScopeKey: "C", Effect: EffectDeny, Tool: "Write", Pattern: "secret/**"},
		{Scope: ScopeChannel, ScopeKey: "C", Effect: EffectDeny, Tool: "Read", Pattern: "/etc/**"},
		{Scope: ScopeChannel, ScopeKey: "C", Effect: EffectDeny, Tool: "WebFetch", Pattern: "domain:evil.example"},
		{Scope: ScopeChannel, ScopeKey: "C", Effect: EffectDeny, Tool: "mcp__github__*"},
		{Scope: ScopeChannel, ScopeKey: "C", Effect: EffectDeny, Tool: "WebSearch"},
		{Scope: ScopeChannel, ScopeKey: "C", Effect: EffectDeny, Tool: "Web*"},                          // not expressible
		{Scope: ScopeChannel, ScopeKey: "C", Effect: EffectDeny, Tool: "mcp__x__y", Pattern: `{"a":1}`}, // not expressible
		{Scope: ScopeChannel, ScopeKey: "OTHER", Effect: EffectDeny, Tool: "Bash"},
		{Scope: ScopeThread, ScopeKey: "T", Effect: EffectDeny, Tool: "Edit", Pattern: "a.go"},
		{Scope: ScopeThread, ScopeKey: "T2", Effect: EffectDeny, Tool: "Edit"},
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash"},
		{Scope: ScopeGlobal, Effect: EffectDeny, Tool: "Bash", Pattern: "rm -rf:*"}, // duplicate
	}
	got := CLIDenyRules(rules, "C", "T")
	want := []string{"Bash(rm -rf:*)", "Write(secret/**)", "Read(//etc/**)", "WebFetch(domain:evil.example)", "mcp__github", "WebSearch", "Edit(a.go)"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
