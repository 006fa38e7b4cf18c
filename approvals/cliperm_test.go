package approvals

import (
	"slices"
	"testing"
)

func TestCLIDenyRules(t *testing.T) {
	deny := func(scope Scope, key, tool, pattern string) Rule {
		return Rule{Scope: scope, ScopeKey: key, Effect: EffectDeny, Tool: tool, Pattern: pattern}
	}
	rules := []Rule{
		deny(ScopeGlobal, "", "Bash", "rm -rf:*"),
		deny(ScopeChannel, "C", "Edit", "secret/**"),
		deny(ScopeChannel, "C", "Read", "/etc/**"),
		deny(ScopeChannel, "C", "Read", "/srv/../etc/passwd"),
		deny(ScopeChannel, "C", "Read", "../sibling/**"),
		deny(ScopeChannel, "C", "Read", "*.env"),
		deny(ScopeChannel, "C", "WebFetch", "domain:evil.example"),
		deny(ScopeChannel, "C", "mcp__github__*", ""),
		deny(ScopeChannel, "C", "WebSearch", ""),
		deny(ScopeChannel, "C", "Write", ""),
		deny(ScopeChannel, "C", "Write", "secret/**"),   // the CLI ignores Write(path)
		deny(ScopeChannel, "C", "Grep", "/etc/**"),      // no Grep tool in 2.1.330
		deny(ScopeChannel, "C", "NotebookEdit", "a/**"), // not measured
		deny(ScopeChannel, "C", "Web*", ""),             // not expressible
		deny(ScopeChannel, "C", "mcp__x__y", `{"a":1}`), // compared as JSON here
		deny(ScopeChannel, "C", "Bash", "echo a\nb"),    // control character
		deny(ScopeChannel, "C", "Read", "/"),            // would deny every read
		deny(ScopeChannel, "C", "Edit", "."),            // would deny the whole cwd
		deny(ScopeChannel, "OTHER", "Bash", ""),
		deny(ScopeThread, "T", "Edit", "a.go"),
		deny(ScopeThread, "T2", "Edit", ""),
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash"},
		deny(ScopeGlobal, "", "Bash", "rm -rf:*"), // a duplicate
	}
	common := []string{"Bash(rm -rf:*)"}
	t.Run("with cwd", func(t *testing.T) {
		got := CLIDenyRulesIn(rules, "C", "T", "/work/proj")
		want := append(common, "Edit(//work/proj/secret/**)", "Read(//etc/**)", "Read(//etc/passwd)", "Read(//work/sibling/**)",
			"Read(//work/proj/*.env)", "WebFetch(domain:evil.example)", "WebFetch(domain:*.evil.example)",
			"mcp__github", "WebSearch", "Write", "Edit(//work/proj/a.go)")
		if !slices.Equal(got, want) {
			t.Errorf("got  %q\nwant %q", got, want)
		}
		for _, p := range []string{"/work", "/work/proj/", "/"} {
			if got := CLIDenyRulesIn([]Rule{deny(ScopeGlobal, "", "Read", p)}, "C", "T", "/work/proj"); len(got) != 0 {
				t.Errorf("Read(%s) in /work/proj: %q, want left out", p, got)
			}
		}
	})
	t.Run("without cwd", func(t *testing.T) {
		got := CLIDenyRules(rules, "C", "T")
		want := append(common, "Edit(secret/**)", "Read(//etc/**)", "Read(//etc/passwd)",
			"Read(*.env)", "WebFetch(domain:evil.example)", "WebFetch(domain:*.evil.example)",
			"mcp__github", "WebSearch", "Write", "Edit(a.go)")
		if !slices.Equal(got, want) {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
	if got := CLIDenyRules(rules, "", ""); !slices.Equal(got, common) {
		t.Errorf("no channel or thread: %q, want only the global rules", got)
	}
}
