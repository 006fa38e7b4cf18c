package approvals

import (
	"encoding/json"
	"testing"
)

func bashInput(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd, "description": "test"})
	return b
}

// matchesBashCases is TestMatchesBash's table, grouped by the shell feature
// each case exercises; at package level so the test itself stays short.
var matchesBashCases = []struct {
	name    string
	pattern string
	cmd     string
	allow   bool // want: an allow rule matches
	deny    bool // want: a deny rule matches
}{
	// Prefix rules, simple commands.
	{"prefix alone", "git:*", "git", true, true},
	{"prefix and args", "git:*", "git status", true, true},
	{"prefix tab", "git:*", "git\tstatus", true, true},
	{"surrounding blanks", "git:*", "  git status \n", true, true},
	{"longer word", "git:*", "gitk --all", false, false},
	{"dash word", "git:*", "git-upload-pack x", false, false},
	{"two-word prefix", "git status:*", "git status -s", true, true},
	{"two-word prefix other sub", "git status:*", "git push", false, false},
	{"double blank", "git status:*", "git  status", true, true},
	{"other command", "git:*", "rm -rf /", false, false},
	{"empty command", "git:*", "", false, false},
	{"trailing semicolon", "git:*", "git status;", true, true},

	// Compound commands: allow needs every part, deny any part.
	{"and both", "git:*", "git status && git log", true, true},
	{"and rm", "git:*", "git status && rm -rf /", false, true},
	{"or rm", "git:*", "git status || rm -rf /", false, true},
	{"semicolon rm", "git:*", "git status; rm -rf /", false, true},
	{"pipe sh", "git:*", "git log | sh", false, true},
	{"pipe stderr", "git:*", "git log |& tee x", false, true},
	{"background rm", "git:*", "git log & rm -rf /", false, true},
	{"newline rm", "git:*", "git log\nrm -rf /", false, true},
	{"rm first", "git:*", "rm -rf / && git status", false, true},
	{"line continuation then and", "git:*", "git status \\\n&& rm -rf /", false, true},
	{"line continuation in args", "git:*", "git log \\\n  --oneline", false, true},

	// Redirections are not separators.
	{"2>&1", "git:*", "git log 2>&1", true, true},
	{">&2", "git:*", "git log >&2", true, true},
	{"&>", "git:*", "git log &> out.txt", false, true},
	{"&>>", "git:*", "git log &>> out.txt", false, true},
	{">|", "git:*", "git log >| out.txt", false, true},
	{"redirect to file", "git:*", "git log > out.txt", false, true},
	{"here-string", "git:*", "git apply <<< x", false, true},
	{"redirect then pipe", "git:*", "git log 2>&1 | head", false, true},
	{"escaped > is not a redirection", "echo:*", `echo \>& rm -rf /`, false, true},
	{"quoted > is not a redirection", "echo:*", `echo '>'& rm -rf /`, false, true},

	// Quotes and escapes hide separators.
	{"single-quoted and", "git:*", "git commit -m 'a && rm -rf /'", true, true},
	{"double-quoted semicolon", "git:*", `git commit -m "a; rm -rf /"`, true, true},
	{"escaped semicolon", "git:*", `git log \; rm -rf /`, true, true},
	{"escaped ands", "git:*", `git log \&\& rm -rf /`, true, true},
	{"escaped quote in double", "git:*", `git commit -m "say \"hi\"; ok"`, true, true},
	{"quoted newline", "git:*", "git commit -m 'line1\nline2'", true, true},
	{"single-quoted dollar paren", "git:*", "git commit -m '$(not run)'", true, true},
	{"plain variable", "git:*", "git status $BRANCH", true, true},
	{"variable where an option could be", "git:*", "git log $BRANCH", false, true},
	{"unterminated single", "git:*", "git log 'oops", false, true},
	{"unterminated double", "git:*", `git log "oops`, false, true},

	// Substitutions never match an allow rule with a pattern.
	{"dollar paren", "git:*", "git log $(echo main)", false, true},
	{"dollar paren rm", "rm:*", "echo $(rm -rf /)", false, true},
	{"dollar paren in double", "git:*", `git commit -m "$(rm -rf /)"`, false, true},
	{"backticks", "git:*", "git log `rm -rf /`", false, true},
	{"backticks deny", "rm:*", "ls `rm -rf /`", false, true},
	{"process substitution in", "git:*", "git diff <(cat /etc/passwd)", false, true},
	{"process substitution out", "git:*", "git log >(sh)", false, true},
	{"process substitution deny", "rm:*", "cat <(rm x)", false, true},
	{"arithmetic", "echo:*", "echo $((1+2))", false, true},
	{"nested", "rm:*", "echo $(echo $(rm -rf /))", false, true},
	{"unterminated substitution", "git:*", "git log $(echo", false, true},

	// Constructs allow rules refuse because they hide commands.
	{"ansi-c quote hides newline", "git:*", "git log $'\\''\nrm -rf /\necho '", false, true},
	{"ansi-c quote ok", "git:*", `git commit -m $'a\'b'`, false, true},
	{"comment hides quote", "git:*", "git log #'\nrm -rf /\n#'", false, true},
	{"comment", "git:*", "git status # just looking", false, true},
	{"hash mid word", "git:*", "git log a#b", true, true},
	{"comment after redirect", "echo:*", "echo a >#b", false, true},
	{"heredoc", "cat:*", "cat <<EOF\ncat '\nEOF\nrm -rf /\necho '", false, true},
	{"quoted heredoc", "cat:*", "cat <<'EOF'\nhello\nEOF", false, true},
	{"function definition", "git:*", "git () ( rm -rf / ); git status", false, true},
	{"subshell", "git:*", "(git status)", false, false},
	{"param expansion", "ls:*", `ls "${HOME}"`, true, true},
	{"param default hides comment", "echo:*", "echo ${x:-a #}; rm -rf /", false, true},

	// Assignments: allow does not skip them, deny does.
	{"env assignment", "git:*", "FOO=1 git status", false, true},
	{"env assignment deny", "rm:*", "FOO=1 BAR='a b' rm -rf /", false, true},

	// Exact patterns.
	{"exact", "npm test", "npm test", true, true},
	{"exact trimmed", "npm test", "  npm test\n", true, true},
	{"exact longer", "npm test", "npm test --watch", false, false},
	{"exact prefix word", "npm test", "npm testing", false, false},
	{"exact then rm", "npm test", "npm test && rm -rf /", false, true},
	{"exact twice", "npm test", "npm test; npm test", true, true},
	{"exact compound as a whole", "touch a && echo b", "touch a && echo b", true, true},
	{"exact compound extended", "touch a && echo b", "touch a && echo b && rm -rf /", false, false},
	{"exact with substitution as a whole", "echo $(date)", "echo $(date)", true, true},
}

func TestMatchesBash(t *testing.T) {
	for _, tt := range matchesBashCases {
		t.Run(tt.name, func(t *testing.T) {
			in := bashInput(tt.cmd)
			allow := Rule{Effect: EffectAllow, Tool: "Bash", Pattern: tt.pattern}
			deny := Rule{Effect: EffectDeny, Tool: "Bash", Pattern: tt.pattern}
			if got := allow.Matches("Bash", in, "/w"); got != tt.allow {
				t.Errorf("allow %s on %q = %v, want %v", allow.Spec(), tt.cmd, got, tt.allow)
			}
			if got := deny.Matches("Bash", in, "/w"); got != tt.deny {
				t.Errorf("deny %s on %q = %v, want %v", deny.Spec(), tt.cmd, got, tt.deny)
			}
			// An empty pattern matches any command, whatever it holds.
			for _, e := range []Effect{EffectAllow, EffectDeny} {
				if !(Rule{Effect: e, Tool: "Bash"}).Matches("Bash", in, "/w") {
					t.Errorf("%s Bash (no pattern) does not match %q", e, tt.cmd)
				}
			}
		})
	}
}

func TestMatchesBashBadInput(t *testing.T) {
	allow := Rule{Effect: EffectAllow, Tool: "Bash", Pattern: "git:*"}
	deny := Rule{Effect: EffectDeny, Tool: "Bash", Pattern: "git:*"}
	for _, in := range []string{`{}`, `not json`, `{"command":42}`, `[]`, `null`, ``} {
		if allow.Matches("Bash", json.RawMessage(in), "/w") {
			t.Errorf("allow matched unreadable input %q", in)
		}
		if !deny.Matches("Bash", json.RawMessage(in), "/w") {
			t.Errorf("deny did not fail closed on unreadable input %q", in)
		}
	}
}
