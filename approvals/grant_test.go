package approvals

import (
	"encoding/json"
	"testing"
)

// TestProtectedNeverAllowed: whatever allow rule exists, a write to the
// files that configure Claude Code, git or the bot asks a person.
func TestProtectedNeverAllowed(t *testing.T) {
	const cwd = "/w"
	broad := []Rule{
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Write", Pattern: "./**"},
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Edit", Pattern: "/**"},
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "MultiEdit"},
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "NotebookEdit", Pattern: "**"},
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Write", Pattern: ".claude/**"},
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Read"},
	}
	own := []string{"/state/claudeops.db", "/state/claudeops.db-wal", "/state/crypto"}
	tests := []struct {
		name, tool, path, resolved string
	}{
		{"settings", "Write", ".claude/settings.json", ""},
		{"settings absolute", "Write", "/w/.claude/settings.local.json", ""},
		{"claude dir case", "Edit", "/w/.Claude/settings.json", ""},
		{"nested claude dir", "Write", "/w/sub/.claude/commands/x.md", ""},
		{"home claude dir", "Write", "/root/.claude/settings.json", ""},
		{"git hook", "Write", ".git/hooks/pre-commit", ""},
		{"git config", "Edit", "/w/.git/config", ""},
		{"nested git", "MultiEdit", "vendor/x/.git/config", ""},
		{"mcp", "Write", ".mcp.json", ""},
		{"mcp nested", "Write", "sub/.MCP.json", ""},
		{"instructions", "Write", "CLAUDE.md", ""},
		{"instructions lower", "Edit", "docs/claude.md", ""},
		{"local instructions", "Write", "CLAUDE.local.md", ""},
		{"user config", "Write", "/root/.claude.json", ""},
		{"submodules", "Write", ".gitmodules", ""},
		{"climb into", "Write", "src/../.claude/settings.json", ""},
		{"notebook in git", "NotebookEdit", ".git/x.ipynb", ""},
		{"link to settings", "Write", "notes.txt", "/w/.claude/settings.json"},
		{"link to hooks", "Edit", "src/a.go", "/w/.git/hooks/post-checkout"},
		{"bot db", "Write", "/state/claudeops.db", ""},
		{"bot wal read", "Read", "/state/claudeops.db-wal", ""},
		{"bot crypto read", "Read", "/state/crypto/olm.db", ""},
		{"link to bot db", "Read", "db.txt", "/state/claudeops.db"},
		{"bashrc", "Write", "/root/.bashrc", ""},
		{"profile via link", "Edit", "notes.txt", "/root/.profile"},
		{"npmrc in repo", "Write", ".npmrc", ""},
		{"envrc in repo", "Edit", "sub/.envrc", ""},
		{"git user config", "Write", "/root/.config/git/config", ""},
		{"gitconfig", "Edit", "/root/.GITCONFIG", ""},
		{"netrc", "Write", "/root/.netrc", ""},
		{"cli config dir", "Write", "/etc/claude-cfg/settings.json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			field := "file_path"
			if tt.tool == "NotebookEdit" {
				field = "notebook_path"
			}
			c := Call{ChannelKey: "C", ThreadKey: "T", Tool: tt.tool, Input: pathInput(field, tt.path), Cwd: cwd, Resolved: tt.resolved, Own: own, CLIDirs: []string{"/etc/claude-cfg"}}
			if !Protected(c) {
				t.Errorf("Protected = false")
			}
			if eff, r := EvaluateCall(broad, c); eff == EffectAllow {
				t.Errorf("allowed by %s", r.Spec())
			}
			if got := GrantChoices(c); len(got) != 0 {
				t.Errorf("grants offered: %v", got)
			}
			deny := []Rule{{Scope: ScopeGlobal, Effect: EffectDeny, Tool: tt.tool}}
			if eff, _ := EvaluateCall(deny, c); eff != EffectDeny {
				t.Errorf("a deny rule no longer matches")
			}
		})
	}
}

// TestNotProtected: ordinary files, and reading configuration, still follow
// the rules.
func TestNotProtected(t *testing.T) {
	allow := []Rule{
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Write", Pattern: "src/**"},
		{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Read"},
	}
	for _, tt := range []struct{ tool, path string }{
		{"Write", "src/a.go"},
		{"Write", "src/claude.mdx"},
		{"Write", "src/.gitignore"},
		{"Write", "src/gitx/a"},
		{"Read", ".claude/settings.json"},
		{"Read", ".git/config"},
		{"Read", "CLAUDE.md"},
	} {
		c := Call{Tool: tt.tool, Input: pathInput("file_path", tt.path), Cwd: "/w", Own: []string{"/state/db"}}
		if Protected(c) {
			t.Errorf("%s %s: protected", tt.tool, tt.path)
		}
		if eff, _ := EvaluateCall(allow, c); eff != EffectAllow {
			t.Errorf("%s %s: not allowed", tt.tool, tt.path)
		}
	}
}

// TestResolvedMustMatchToo: a symlink inside a granted folder pointing out
// of it is not covered by the grant.
func TestResolvedMustMatchToo(t *testing.T) {
	rules := []Rule{{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Write", Pattern: "src/**"}}
	c := Call{Tool: "Write", Input: pathInput("file_path", "src/link"), Cwd: "/w", Resolved: "/home/u/.bashrc"}
	if eff, _ := EvaluateCall(rules, c); eff == EffectAllow {
		t.Fatal("a link out of the granted folder was allowed")
	}
	c.Resolved = "/w/src/real"
	if eff, _ := EvaluateCall(rules, c); eff != EffectAllow {
		t.Fatal("a link within the folder was not allowed")
	}
	deny := []Rule{{Scope: ScopeGlobal, Effect: EffectDeny, Tool: "Write", Pattern: "/home/**"}}
	c.Resolved = "/home/u/.bashrc"
	if eff, _ := EvaluateCall(deny, c); eff != EffectDeny {
		t.Fatal("a deny rule on the link's target did not match")
	}
}

func TestGrantRule(t *testing.T) {
	call := func(tool string, in json.RawMessage) Call {
		return Call{ChannelKey: "C1", ThreadKey: "T1", Tool: tool, Input: in, Cwd: "/w"}
	}
	tests := []struct {
		name   string
		c      Call
		choice Choice
		want   Rule
		ok     bool
	}{
		{"bash thread", call("Bash", bashInput("ls -la")), ChoiceAllowThread,
			Rule{Scope: ScopeThread, ScopeKey: "T1", Effect: EffectAllow, Tool: "Bash", Pattern: "ls:*"}, true},
		{"bash always", call("Bash", bashInput("ls -la")), ChoiceAllowAlways,
			Rule{Scope: ScopeChannel, ScopeKey: "C1", Effect: EffectAllow, Tool: "Bash", Pattern: "ls:*"}, true},
		{"bash writer exact", call("Bash", bashInput("touch a.txt")), ChoiceAllowThread,
			Rule{Scope: ScopeThread, ScopeKey: "T1", Effect: EffectAllow, Tool: "Bash", Pattern: "touch a.txt"}, true},
		{"monitor thread", call("Monitor", json.RawMessage(`{"command":"tail -f x.log","timeout_ms":1}`)), ChoiceAllowThread,
			Rule{Scope: ScopeThread, ScopeKey: "T1", Effect: EffectAllow, Tool: "Monitor", Pattern: "tail:*"}, true},
		{"monitor websocket", call("Monitor", json.RawMessage(`{"ws":{"url":"wss://x"},"timeout_ms":1}`)), ChoiceAllowThread, Rule{}, false},
		{"bash folder", call("Bash", bashInput("touch a.txt")), ChoiceAllowFolder, Rule{}, false},
		{"top-level write is that file", call("Write", pathInput("file_path", "/w/notes.txt")), ChoiceAllowThread,
			Rule{Scope: ScopeThread, ScopeKey: "T1", Effect: EffectAllow, Tool: "Write", Pattern: "notes.txt"}, true},
		{"top-level write has no folder", call("Write", pathInput("file_path", "/w/notes.txt")), ChoiceAllowFolder, Rule{}, false},
		{"subfolder", call("Edit", pathInput("file_path", "src/pkg/a.go")), ChoiceAllowFolder,
			Rule{Scope: ScopeThread, ScopeKey: "T1", Effect: EffectAllow, Tool: "Edit", Pattern: "src/pkg/**"}, true},
		{"folder outside cwd", call("Write", pathInput("file_path", "/tmp/x/a")), ChoiceAllowFolder, Rule{}, false},
		{"file outside cwd", call("Write", pathInput("file_path", "/tmp/x/a")), ChoiceAllowThread,
			Rule{Scope: ScopeThread, ScopeKey: "T1", Effect: EffectAllow, Tool: "Write", Pattern: "/tmp/x/a"}, true},
		{"settings", call("Write", pathInput("file_path", ".claude/settings.json")), ChoiceAllowThread, Rule{}, false},
		{"search whole tool", call("WebSearch", json.RawMessage(`{"query":"x"}`)), ChoiceAllowThread,
			Rule{Scope: ScopeThread, ScopeKey: "T1", Effect: EffectAllow, Tool: "WebSearch"}, true},
		{"mcp no bare grant", call("mcp__x__y", json.RawMessage(`{}`)), ChoiceAllowAlways, Rule{}, false},
		{"unknown tool no bare grant", call("SomeNewTool", json.RawMessage(`{"a":1}`)), ChoiceAllowThread, Rule{}, false},
		{"agent no bare grant", call("Agent", json.RawMessage(`{"prompt":"x"}`)), ChoiceAllowThread, Rule{}, false},
		{"once", call("Bash", bashInput("ls")), ChoiceAllow, Rule{}, false},
		{"deny", call("Bash", bashInput("ls")), ChoiceDeny, Rule{}, false},
		{"question", call("AskUserQuestion", json.RawMessage(`{}`)), ChoiceAllowThread, Rule{}, false},
		{"plan", call("ExitPlanMode", json.RawMessage(`{"plan":"x"}`)), ChoiceAllowThread, Rule{}, false},
		{"unreadable bash never widens", call("Bash", json.RawMessage(`{}`)), ChoiceAllowAlways, Rule{}, false},
		{"no thread key", Call{ChannelKey: "C1", Tool: "Bash", Input: bashInput("ls"), Cwd: "/w"}, ChoiceAllowThread, Rule{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := GrantRule(tt.c, tt.choice)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("GrantRule = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
			if !ok {
				return
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("grant invalid: %v", err)
			}
			if eff, _ := EvaluateCall([]Rule{got}, tt.c); eff != EffectAllow {
				t.Fatalf("grant %s does not allow its own call", got.Spec())
			}
		})
	}
}

// TestTopLevelGrantStaysThere is the case: "Allow for thread" on a
// top-level file must not let Claude plant .claude/settings.json.
func TestTopLevelGrantStaysThere(t *testing.T) {
	c := Call{ChannelKey: "C", ThreadKey: "T", Tool: "Write", Input: pathInput("file_path", "/w/README.md"), Cwd: "/w"}
	var rules []Rule
	for _, ch := range GrantChoices(c) {
		r, _ := GrantRule(c, ch)
		rules = append(rules, r)
	}
	for _, p := range []string{"/w/.claude/settings.json", "/w/other.md", "/w/sub/README.md", "/w/CLAUDE.md"} {
		next := Call{ChannelKey: "C", ThreadKey: "T", Tool: "Write", Input: pathInput("file_path", p), Cwd: "/w"}
		if eff, r := EvaluateCall(rules, next); eff == EffectAllow {
			t.Errorf("write %s allowed by %s", p, r.Spec())
		}
	}
}

func TestParseTyped(t *testing.T) {
	tests := []struct {
		in   string
		want Typed
		ok   bool
	}{
		{"allow", Typed{Choice: ChoiceAllow}, true},
		{"allow 2", Typed{Choice: ChoiceAllow, Ref: "2"}, true},
		{"allow #12", Typed{Choice: ChoiceAllow, Ref: "12"}, true},
		{"Allow Thread 3", Typed{Choice: ChoiceAllowThread, Ref: "3"}, true},
		{"allow folder", Typed{Choice: ChoiceAllowFolder}, true},
		{"allow always a1B2", Typed{Choice: ChoiceAllowAlways, Ref: "a1b2"}, true},
		{"allow abc", Typed{}, false},
		{"allow 2 3", Typed{}, false},
		{"allow thread now", Typed{}, false},
		{"allow #", Typed{}, false},
		{"deny", Typed{Choice: ChoiceDeny}, true},
		{"deny 2", Typed{Choice: ChoiceDeny, Ref: "2"}, true},
		{"deny #2 Too Risky", Typed{Choice: ChoiceDeny, Ref: "2", Reason: "Too Risky"}, true},
		{"deny cafe is closed", Typed{Choice: ChoiceDeny, Ref: "cafe", Reason: "is closed", RefOrReason: true}, true},
		{"deny use staging", Typed{Choice: ChoiceDeny, Reason: "use staging"}, true},
		{"denied", Typed{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseTyped(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseTyped(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAcceptEdit(t *testing.T) {
	for _, tt := range []struct {
		tool, path, resolved string
		want                 bool
	}{
		{"Write", "src/a.go", "", true},
		{"Edit", "/w/README.md", "", true},
		{"NotebookEdit", "", "", false},
		{"Write", "/etc/passwd", "", false},
		{"Write", "../x", "", false},
		{"Write", "link", "/etc/passwd", false},
		{"Write", ".claude/settings.json", "", false},
		{"Edit", ".git/config", "", false},
		{"Read", "a.go", "", false},
		{"Bash", "a.go", "", false},
	} {
		c := Call{Tool: tt.tool, Input: pathInput("file_path", tt.path), Cwd: "/w", Resolved: tt.resolved}
		if got := AcceptEdit(c); got != tt.want {
			t.Errorf("AcceptEdit(%s %s → %s) = %v", tt.tool, tt.path, tt.resolved, got)
		}
	}
}

// TestStartupFilesProtected: a write to any startup file, anywhere, asks.
func TestStartupFilesProtected(t *testing.T) {
	rules := []Rule{{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Write"}}
	for _, name := range startupFiles {
		for _, p := range []string{"/home/u/" + name, "/w/" + name} {
			c := Call{ChannelKey: "C", ThreadKey: "T", Tool: "Write", Input: pathInput("file_path", p), Cwd: "/w"}
			if eff, _ := EvaluateCall(rules, c); eff == EffectAllow || !Protected(c) {
				t.Errorf("write %s: allowed or not protected", p)
			}
		}
	}
}
