package approvals

import (
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/bashoracle"
)

// fuzzRules are the allow rules FuzzBashAllow tries on every input; the
// oracle reads the exact one, "git status", as a prefix.
var fuzzRules = []string{"git status:*", "git:*", "ls:*", "echo:*", "git status"}

// fuzzToks are shell-significant tokens. FuzzBashAllow also reads its
// input as a list of them, so that the fuzzer reaches deep into the
// grammar instead of being stopped at the first odd byte.
var fuzzToks = []string{
	"git", "git", "status", "ls", "echo", "x", " ", " ", "\t", ";", "&&", "||", "|", "&", "\n", "'", "\"", "\\",
	"#", "a#", "#'", "$'", "'\\''", "\\'", "\\\"", "''", "$\"", "\"$", "(", ")", ") ", " (", "{ ", " }",
	"<<", "<<-", "<<<", "EOF", ">", "<", "2>&1", ">&", "&>", "|&", ">|", "$(", "`", "<(", ">(", "${",
	"$", "=", "FOO=1 ", "rm", "\\\n", "\r", "!", "case", "in", "esac", ";;", "function", "coproc",
	"time", "[[", "]]", "alias", "do", "done", "for", "if", "then", "fi", "-c", "$$", "$x", "${x}", "$1",
	"\"$x\"", "'$(touch y)'", "touch y", ">/dev/null", "2>/dev/null", "&>/dev/null", ">&2", "/dev/null",
	"*", "?", "[a]", "{a,b}", "~", "%", "^", "@", ",", ":", "+", "-", ".", "/", "\\;", "\\ ", "\\$",
	"；", "\u00a0", "é", "\"é\\\"", "\x01", "\x7f", "0", "1", "2", "3", "-s", "--", "a=b", "\"a b\"",
}

// fuzzSoup reads b as tokens after a command word picked by its first byte.
func fuzzSoup(b string) string {
	if b == "" {
		return ""
	}
	heads := []string{"git", "git status", "ls", "echo"}
	var s strings.Builder
	s.WriteString(heads[int(b[0])%len(heads)])
	for i := 1; i < len(b); i++ {
		s.WriteString(fuzzToks[int(b[i])%len(fuzzToks)])
	}
	return s.String()
}

// FuzzBashAllow runs every input an allow rule matches under the Bash
// oracle (internal/bashoracle): the input itself and the input read as
// tokens, for each of fuzzRules and for the rule derived from it. Any
// command Bash runs beyond the rule's is a failure.
func FuzzBashAllow(f *testing.F) {
	for _, c := range loadBashCorpus(f) {
		f.Add(c.Cmd)
	}
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	o := bashoracle.New(f)
	f.Fuzz(func(t *testing.T, in string) {
		for _, cmd := range []string{in, fuzzSoup(in)} {
			var rules []string
			for _, r := range fuzzRules {
				if matchBash(r, cmd, false) {
					rules = append(rules, r)
				}
			}
			if d := deriveBash(cmd); strings.HasSuffix(d, ":*") {
				if !matchBash(d, cmd, false) {
					t.Fatalf("derived %q does not match %q", d, cmd)
				}
				if _, ok := bashoracle.RuleWords(d); ok {
					rules = append(rules, d)
				}
			}
			if len(rules) == 0 {
				continue
			}
			run, err := o.Run(cmd)
			if err != nil {
				t.Fatalf("oracle on %q: %v", cmd, err)
			}
			for _, r := range rules {
				if v := run.Violations(r); len(v) > 0 {
					t.Fatalf("allow %s matched %q, but under Bash: %q", r, cmd, v)
				}
			}
		}
	})
}

// fuzzSeeds are inputs of the first fuzz target, kept for both.
var fuzzSeeds = []string{
	"git status",
	"git status && rm -rf /",
	"git log | head; echo 'a && b' \"c; d\" \\; e",
	"git log $(rm -rf /) `x` <(y) >(z)",
	"git log $'\\''\nrm -rf /\necho '",
	"git log #'\nrm -rf /\n#'",
	"cat <<EOF\ncat '\nEOF\nrm -rf /\necho '",
	"git () ( rm -rf / ); git status",
	"echo \\>& rm -rf /",
	"git log 2>&1 >| x &> y |& z",
	"FOO=1 BAR='a b' git push",
	"echo ${x:-a #}; rm -rf /",
	"$($($($($(",
	"git log \\\n&& rm",
	"\"unterminated",
	"git status $$'\\';touch pwned;#'",
	"\x00\x05\x07\x10\x22\x33\x40\x55",
}

// FuzzBashSplit checks cheap invariants on any input, without Bash: the
// readers never panic, the deny scanner's parts are trimmed, deny rules
// match whatever they matched before, an allow rule that matches is backed
// by parseAllow and its deny twin matches too, and a derived pattern
// matches the command it came from.
func FuzzBashSplit(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, legacy := range []bool{false, true} {
			for _, p := range scanBash(cmd, legacy).parts {
				if p == "" || p != strings.Trim(p, " \t") {
					t.Fatalf("part %q not trimmed or empty", p)
				}
			}
		}
		_ = stripAssignments(cmd)
		_ = looseWords(cmd)

		// Deny rules never match less than they did.
		for _, pattern := range []string{"rm:*", "git push:*", "git status", trimCommand(cmd) + ":*"} {
			if legacyDeny(pattern, cmd) && !matchBash(pattern, cmd, true) {
				t.Fatalf("deny %s matched %q before, not now", pattern, cmd)
			}
		}

		prefixes := []string{"git", "echo", "cat", "rm"}
		if w, _, _ := strings.Cut(trimCommand(cmd), " "); commandName(w) {
			prefixes = append(prefixes, w)
		}
		for _, prefix := range prefixes {
			pattern := prefix + ":*"
			if !matchBash(pattern, cmd, false) {
				continue
			}
			cmds, err := parseAllow(trimCommand(cmd))
			if err != nil || len(cmds) == 0 {
				t.Fatalf("allow %s matched %q, which parseAllow refuses: %v", pattern, cmd, err)
			}
			for _, c := range cmds {
				if len(c.words) == 0 || !c.words[0].literal || c.words[0].text != prefix {
					t.Fatalf("allow %s matched %q but a command starts %+v", pattern, cmd, c.words)
				}
			}
			if !matchBash(pattern, cmd, true) {
				t.Fatalf("allow %s matched %q but the deny rule does not", pattern, cmd)
			}
		}

		if d := deriveBash(cmd); d != "" && !matchBash(d, cmd, false) {
			t.Fatalf("derived %q does not match %q", d, cmd)
		}
	})
}
