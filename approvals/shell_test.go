package approvals

import (
	"strings"
	"testing"
)

func TestParseAllow(t *testing.T) {
	tests := []struct {
		cmd   string
		words string // simple commands split by " | ", words by " ", non-literal words in <>
		err   string // a part of the error, when refused
	}{
		{cmd: "git status -s", words: "git status -s"},
		{cmd: "git 'a b' \"c\\\"d\" e\\ f", words: `git a b c"d e f`},
		{cmd: "a; b && c || d | e |& f & g\nh", words: "a | b | c | d | e | f | g | h"},
		{cmd: "ls *.go ~ {a,b} $HOME \"${x}\"", words: "ls <*.go> <~> <{a,b}> <$HOME> <${x}>"},
		{cmd: "git status 2>&1 >/dev/null &> /dev/null", words: "git status"},
		{cmd: "a\n\n  b;\n", words: "a | b"},
		{cmd: "a &&\n b", words: "a | b"},
		{cmd: `x "a\b"`, words: `x a\b`},
		{cmd: "x ''#y", words: "x #y"},

		{cmd: "git status $$'\\';touch pwned;#'", err: "$ not followed by a variable name"},
		{cmd: "x $'a'", err: "$ not followed"},
		{cmd: "x ${a:-b}", err: "${…} with more than a name"},
		{cmd: "x $(y)", err: "$ not followed"},
		{cmd: "x `y`", err: "outside quotes"},
		{cmd: "x \"`y`\"", err: "command substitution"},
		{cmd: "x \\\ny", err: "line continuation"},
		{cmd: "x \"a\\\nb\"", err: "line continuation"},
		{cmd: "x #y", err: "comment"},
		{cmd: "(x)", err: "outside quotes"},
		{cmd: "x > f", err: "redirection to other than /dev/null"},
		{cmd: "x >&3", err: "fd 0-2"},
		{cmd: "x 2>&1x", err: "target goes on"},
		{cmd: "x <<< y", err: "redirection to other than /dev/null"},
		{cmd: "x>/dev/null", err: "right after a word"},
		{cmd: "x; ;", err: "without a command before it"},
		{cmd: "x |", err: "without a command after it"},
		{cmd: "x\r", err: "control byte"},
		{cmd: "x 'a\x01'", err: "control byte"},
		{cmd: "x \"é\"", err: "non-ASCII"},
		{cmd: "x é", err: "outside quotes"},
		{cmd: "x !", err: "outside quotes"},
		{cmd: "x 'a", err: "unterminated single quote"},
		{cmd: "x \"a", err: "unterminated double quote"},
		{cmd: "x \\", err: "at the end"},
	}
	for _, tt := range tests {
		cmds, err := parseAllow(tt.cmd)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseAllow(%q) error = %v, want one containing %q", tt.cmd, err, tt.err)
			}
		case err != nil:
			t.Errorf("parseAllow(%q): %v", tt.cmd, err)
		default:
			if got := showCommands(cmds); got != tt.words {
				t.Errorf("parseAllow(%q) = %s, want %s", tt.cmd, got, tt.words)
			}
		}
	}
}

func showCommands(cmds []shCommand) string {
	var parts []string
	for _, c := range cmds {
		var ws []string
		for _, w := range c.words {
			if w.literal {
				ws = append(ws, w.text)
			} else {
				ws = append(ws, "<"+w.text+">")
			}
		}
		parts = append(parts, strings.Join(ws, " "))
	}
	return strings.Join(parts, " | ")
}

func TestDeriveBash(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"ls -la", "ls:*"},
		{"echo hi", "echo:*"},
		{"'ls' a", "ls:*"},
		{"touch a", "touch a"}, // writes the file it names
		{"cp a b", "cp a b"},
		{"git status -s", "git status:*"},
		{"git log --oneline | head", "git log --oneline | head"},
		{"git", "git"},
		{"git -C x status", "git -C x status"},
		{"git config core.pager x", "git config core.pager x"},
		{"git fetch --upload-pack=x .", "git fetch --upload-pack=x ."},
		{"git commit -m x", "git commit -m x"},
		{"git diff --output=f", "git diff --output=f"}, // refused by its own rule: kept exact
		{"/usr/bin/git diff", "/usr/bin/git diff"},
		{"./ls -la", "./ls -la"},
		{"npm test", "npm test:*"},
		{"npm test --script-shell=x", "npm test --script-shell=x"},
		{"npm run build", "npm run build:*"},
		{"npm run test:unit", "npm run test:unit:*"},
		{"npm run", "npm run"},
		{"npm exec foo", "npm exec foo"},
		{"npm install", "npm install"},
		{"go test ./...", "go test:*"},
		{"go test -exec x ./...", "go test -exec x ./..."},
		{"go run .", "go run ."},
		{"go generate ./...", "go generate ./..."},
		{"make", "make"},
		{"make build", "make build:*"},
		{"make SHELL=x", "make SHELL=x"},
		{"make -j4 build", "make -j4 build"},
		{"sort -n f", "sort:*"},
		{"sort -o f g", "sort -o f g"},
		{"kubectl get pods", "kubectl get pods"},
		{"scp a b:c", "scp a b:c"},
		{"sed -n 1p f", "sed -n 1p f"},
		{"sed -i s/a/b/ f", "sed -i s/a/b/ f"},
		{"python3.12 x.py", "python3.12 x.py"},
		{"cd /tmp", "cd /tmp"},
		{"printf x", "printf x"},
		{"$X status", "$X status"},
		{"ls > f", "ls > f"},
		{"ls :*", "ls:*"},
		{"ls | cat :*", ""},
	}
	for _, tt := range tests {
		got := deriveBash(tt.cmd)
		if got != tt.want {
			t.Errorf("deriveBash(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
		if got != "" && !matchBash(got, tt.cmd, false) {
			t.Errorf("deriveBash(%q) = %q does not match the command", tt.cmd, got)
		}
	}
}

// TestDenyBashBroader: deny rules match what they did before, and also
// commands Bash reads differently from the first scanner, or with quoted
// or redirected command names.
func TestDenyBashBroader(t *testing.T) {
	tests := []struct{ pattern, cmd string }{
		{"rm:*", "git status $$'\\';rm -rf x;#'"}, // the command
		{"rm:*", "'rm' -rf x"},
		{"rm:*", "\\rm -rf x"},
		{"rm:*", "r''m -rf x"},
		{"rm:*", ">/dev/null rm x"},
		{"rm:*", "2>&1 FOO=1 rm x"},
		{"git push:*", "git  push"},
		{"git push:*", "git 'push' origin"},
		{"npm test", "npm  test"},
	}
	for _, tt := range tests {
		if !matchBash(tt.pattern, tt.cmd, true) {
			t.Errorf("deny %s does not match %q", tt.pattern, tt.cmd)
		}
		if legacyDeny(tt.pattern, tt.cmd) && !matchBash(tt.pattern, tt.cmd, true) {
			t.Errorf("deny %s matched %q before, not now", tt.pattern, tt.cmd)
		}
	}
}

// legacyDeny is how deny rules matched before the allow grammar: parts
// of the first scanner, as written or without leading assignments.
func legacyDeny(pattern, cmd string) bool {
	pattern, cmd = trimCommand(pattern), trimCommand(cmd)
	if cmd == "" || pattern == "" {
		return false
	}
	if !strings.HasSuffix(pattern, ":*") && cmd == pattern {
		return true
	}
	sc := scanBash(cmd, true)
	if sc.err != nil {
		return true
	}
	for _, p := range append(sc.parts, sc.inner...) {
		if bashPartMatches(p, pattern) || bashPartMatches(stripAssignments(p), pattern) {
			return true
		}
	}
	return false
}
