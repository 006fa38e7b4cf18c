package approvals

import (
	"encoding/json"
	"strings"
	"testing"
)

// protectedCmdRules are allow rules an admin might write, derived ones,
// and (added per case) the exact command: none may let a command name a
// protected place.
var protectedCmdRules = []Rule{
	{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash", Pattern: "cp:*"},
	{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash", Pattern: "cat:*"},
	{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash", Pattern: "ls:*"},
	{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash", Pattern: "git:*"},
	{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash", Pattern: "sort:*"},
	{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash", Pattern: "tar:*"},
	{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Bash", Pattern: "rsync:*"},
	{Scope: ScopeGlobal, Effect: EffectAllow, Tool: "Monitor", Pattern: "cat:*"},
}

// cmdCall is a Bash call in /w for the user u, with /w/link -> the CLI's
// settings directory, /w/rc -> the user's .bashrc, /w/db -> the bot's
// database, and the bot's state in /state.
func cmdCall(tool, cmd string) Call {
	links := map[string]string{
		"/w/link": "/home/u/.claude", "/w/rc": "/home/u/.bashrc", "/w/db": "/state/claudeops.db",
		"/w/etc": "/etc",
	}
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return Call{
		ChannelKey: "C", ThreadKey: "T", Tool: tool, Input: in, Cwd: "/w", Home: "/home/u",
		Own: []string{"/state/claudeops.db", "/state/crypto"}, CLIDirs: []string{"/etc/claude-cfg"},
		Resolve: func(p string) string {
			for from, to := range links {
				if p == from || strings.HasPrefix(p, from+"/") {
					return to + p[len(from):]
				}
			}
			return p
		},
	}
}

func TestCommandNamesProtectedPlace(t *testing.T) {
	cmds := []string{
		"cp x ~/.claude/settings.json",
		"cp x $HOME/.claude/settings.json",
		"cp x \"${HOME}/.claude/settings.json\"",
		"cp x /home/u/.claude/settings.json",
		"cp x .claude/settings.json",
		"cp x sub/.CLAUDE/settings.json",
		"cp x ~/.claude.json",
		"cp x .git/hooks/pre-commit",
		"cat .git/config",
		"cp x ~/.config/git/config",
		"cp x ../../home/u/.gitconfig",
		"sort --output=~/.bashrc f",
		"sort --output=.bashrc f",
		"sort -o~/.bashrc f",
		"sort -o.bashrc f",
		"git diff --output=.git/x",
		"git --git-dir=.git log",
		"tar -C ~/.claude -xf a.tar",
		"rsync -a x/ host:.bashrc",
		"cp x link/settings.json",
		"cp x rc",
		"cat db",
		"cat /state/claudeops.db",
		"cp /state/crypto/olm.db x",
		"cat /state/*",
		"cat /state/claudeops.d?",
		"cp x /etc/claude-cfg/settings.json",
		"cat etc/claude-cfg/settings.json",
		"cat ~/.b*",
		"cat ~/.[b]ashrc",
		"cat ~/.{bashrc,x}",
		"cat ~/{.bash,}rc",
		"cat ~/.config/{git,x}/config",
		"cat $XDG_CONFIG_HOME/git/config",
		"cat $CLAUDE_CONFIG_DIR/.credentials.json",
		"ls && cat ~/.netrc",
		"cat x; cp y .envrc",
		"cp x $(echo ~/.claude)/settings.json",
		"cp x `printf .claude`/settings.json",
	}
	for _, s := range startupFiles {
		cmds = append(cmds, "cp x ~/"+s, "cat "+s)
	}
	for _, cmd := range cmds {
		for _, tool := range []string{"Bash", "Monitor"} {
			c := cmdCall(tool, cmd)
			if !Protected(c) {
				t.Errorf("%s %q: not protected", tool, cmd)
			}
			rules := append([]Rule{{Scope: ScopeGlobal, Effect: EffectAllow, Tool: tool, Pattern: cmd}}, protectedCmdRules...)
			if eff, r := EvaluateCall(rules, c); eff == EffectAllow {
				t.Errorf("%s %q: allowed by %s", tool, cmd, r.Spec())
			}
			if got := GrantChoices(c); len(got) != 0 {
				t.Errorf("%s %q: grants offered: %v", tool, cmd, got)
			}
			deny := []Rule{{Scope: ScopeGlobal, Effect: EffectDeny, Tool: "Bash"}}
			if eff, _ := EvaluateCall(deny, c); eff != EffectDeny {
				t.Errorf("%s %q: a deny rule no longer matches", tool, cmd)
			}
		}
	}
}

// TestCommandNamesOrdinaryPlace: ordinary words, and names that merely
// look like protected ones, still follow the rules.
func TestCommandNamesOrdinaryPlace(t *testing.T) {
	for _, cmd := range []string{
		"cat README.md", "ls -la src", "cat .gitignore", "ls .github", "cat src/*.go", "ls *",
		"cat *rc", "ls ~", "cat ~/notes.txt", "cat $HOME/notes.txt", "git log --oneline -5",
		"cat config/git.go", "cat .config/gitx", "cp a b", "ls /stateful", "cat /state/other",
		"ls etc", "sort -n f", "cat {a,b}.txt",
	} {
		c := cmdCall("Bash", cmd)
		if Protected(c) {
			t.Errorf("%q: protected", cmd)
		}
		if eff, _ := EvaluateCall(protectedCmdRules, c); eff != EffectAllow {
			t.Errorf("%q: not allowed", cmd)
		}
	}
}

func TestBraceExpand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"{a,b}", []string{"a", "b"}},
		{"x{a,b}y", []string{"xay", "xby"}},
		{"{.bash,}rc", []string{".bashrc", "rc"}},
		{"{a,{b,c}}", []string{"a", "b", "c"}},
		{"{a}", []string{"{a}"}},
		{"{1..3}x", []string{"*x"}},
		{"${HOME}", []string{"${HOME}"}},
		{"{a,b", []string{"{a,b"}},
		{"{a,b}{c,d}", []string{"ac", "ad", "bc", "bd"}},
	}
	for _, tt := range tests {
		if got := braceExpand(tt.in, 100); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("braceExpand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := braceExpand(strings.Repeat("{a,b}", 20), 100); got != nil {
		t.Errorf("2^20 words: got %d, want nil", len(got))
	}
}

// TestLongCommandNotProtected: many ordinary words stay within the bound.
func TestLongCommandNotProtected(t *testing.T) {
	cmd := "git add"
	for i := range 500 {
		cmd += " src/file" + strings.Repeat("x", i%7) + ".go"
	}
	if Protected(cmdCall("Bash", cmd)) {
		t.Fatal("500 ordinary paths: protected")
	}
}
