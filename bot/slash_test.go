package bot

import (
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
)

func TestParseSlash(t *testing.T) {
	for _, tt := range []struct {
		text, name, args string
		ok               bool
	}{
		{"/compact", "compact", "", true},
		{"/compact keep the widgets", "compact", "keep the widgets", true},
		{"/compact\nkeep the widgets", "compact", "keep the widgets", true},
		{"/my-plugin:review  pr 12 ", "my-plugin:review", "pr 12", true},
		{"/etc/passwd is odd", "", "", false},
		{"/ compact", "", "", false},
		{"/", "", "", false},
		{"compact", "", "", false},
		{"//compact", "", "", false},
		{"/compact`rm`", "", "", false},
		{"/über", "", "", false},
	} {
		name, args, ok := parseSlash(tt.text)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("parseSlash(%q) = %q, %q, %v; want %q, %q, %v", tt.text, name, args, ok, tt.name, tt.args, tt.ok)
		}
	}
}

// TestJudgeSlash: the CLI's list decides what is a command; the bot's
// table who may send it; a command of the CLI's own the table does not
// name is refused, a repository's is a prompt; one found by an alias says
// so (a repository's own command of that name comes first, slashes.repo).
func TestJudgeSlash(t *testing.T) {
	cmds := []claudeproc.SlashCommand{
		{Name: "code-review", Aliases: []string{"review"}, Builtin: true},
		{Name: "usage", Aliases: []string{"cost", "stats"}, Builtin: true},
		{Name: "compact", Builtin: true},
		{Name: "brand-new", Builtin: true},
		{Name: "review"},
		{Name: "deploy-notes"},
		{Name: "config"},
	}
	for _, tt := range []struct {
		name string
		want slashVerdict
	}{
		{"cost", slashVerdict{canonical: "usage", rule: slashOpen, known: true, alias: true}},
		{"Stats", slashVerdict{canonical: "usage", rule: slashOpen, known: true, alias: true}},
		{"COMPACT", slashVerdict{canonical: "compact", rule: slashStarter, known: true}},
		{"review", slashVerdict{canonical: "review", rule: slashOpen, known: true}},
		{"deploy-notes", slashVerdict{canonical: "deploy-notes", rule: slashOpen, known: true}},
		{"brand-new", slashVerdict{canonical: "brand-new", known: true}},
		{"config", slashVerdict{canonical: "config", known: true}},
		{"nosuch", slashVerdict{}},
	} {
		if got := judgeSlash(cmds, tt.name); got != tt.want {
			t.Errorf("judgeSlash(%q) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestCompactedText(t *testing.T) {
	for _, tt := range []struct {
		e    claudeproc.CompactBoundary
		want string
	}{
		{claudeproc.CompactBoundary{Trigger: "manual", PreTokens: 198, PostTokens: 2561}, "Context compacted: 198 → 2561 tokens; older messages of this conversation were summarised."},
		{claudeproc.CompactBoundary{Trigger: "auto", PreTokens: 160000, PostTokens: 9000}, "Context compacted (the context was full): 160000 → 9000 tokens; older messages of this conversation were summarised."},
		{claudeproc.CompactBoundary{Trigger: "manual"}, "Context compacted: older messages of this conversation were summarised."},
	} {
		if got := compactedText(&tt.e); got != tt.want {
			t.Errorf("compactedText(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}
