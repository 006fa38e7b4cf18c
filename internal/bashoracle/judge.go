package bashoracle

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Report is what one command did under Bash.
type Report struct {
	Traced  []string   // $BASH_COMMAND before each simple command, the eval's own left out
	Calls   [][]string // argv of each stub call, the program's base name first
	Changed []string   // entries of the work directory created, changed or removed, sorted
	Timeout bool
	Stderr  string
}

// Violations returns how the run went beyond what one allow rule names. A
// rule that is not plain words is itself reported: the oracle cannot read
// it.
func (r Report) Violations(rule string) []string {
	ok, out := r.Unnamed(rule)
	if !ok {
		return []string{fmt.Sprintf("rule %q is not a plain prefix the oracle can check", rule)}
	}
	return out
}

// Unnamed returns what of the run no rule names: a traced command that
// does not start with one rule's words, literally, or that redirects other
// than to /dev/null or by a descriptor dup; a stub called with an argv that
// does not start with one rule's words; a changed file; a timeout. Rules
// that are not plain words (RuleWords) name nothing; checkable is false
// when none is plain.
func (r Report) Unnamed(rules ...string) (checkable bool, out []string) {
	var words [][]string
	for _, rule := range rules {
		if w, ok := RuleWords(rule); ok {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return false, nil
	}
	if r.Timeout {
		out = append(out, "timed out")
	}
	for _, bc := range r.Traced {
		if why := tracedBeyond(bc, words); why != "" {
			out = append(out, fmt.Sprintf("ran %q: %s", bc, why))
		}
	}
	for _, argv := range r.Calls {
		if !slices.ContainsFunc(words, func(w []string) bool { return calledAs(argv, w) }) {
			out = append(out, fmt.Sprintf("program called with argv %q", argv))
		}
	}
	if len(r.Changed) > 0 {
		out = append(out, fmt.Sprintf("files created, changed or removed: %q", r.Changed))
	}
	if len(out) > 0 && r.Stderr != "" {
		out = append(out, "stderr: "+r.Stderr)
	}
	return true, out
}

// tracedBeyond is "" when one rule names bc, else why none does.
func tracedBeyond(bc string, words [][]string) string {
	var whys []string
	for _, w := range words {
		why := TracedViolation(bc, w)
		if why == "" {
			return ""
		}
		whys = append(whys, why)
	}
	return strings.Join(whys, "; ")
}

// calledAs: argv is the rule's program (by base name) with the rule's
// words first.
func calledAs(argv, rule []string) bool {
	base := rule[0][strings.LastIndexByte(rule[0], '/')+1:]
	return len(argv) >= len(rule) && argv[0] == base && slices.Equal(argv[1:len(rule)], rule[1:])
}

// RuleWords splits a rule's prefix on blanks. The oracle's rules are plain
// words, so it needs no shell reading of its own; ok is false for any
// other.
func RuleWords(rule string) (words []string, ok bool) {
	words = strings.Fields(strings.TrimSuffix(rule, ":*"))
	for _, w := range words {
		if strings.ContainsAny(w, `'"\$*?[]{}~#;&|<>()`+"`") {
			return nil, false
		}
	}
	return words, len(words) > 0
}

// TracedViolation checks one $BASH_COMMAND, as Bash prints it: its first
// words must be the rule's, literally (quotes aside), and any redirection
// must be to /dev/null or a dup of one descriptor to another. It returns
// "" when they are, else why not.
func TracedViolation(bc string, rule []string) string {
	toks := traceTokens(bc)
	if len(toks) < len(rule) {
		return "fewer words than the rule"
	}
	for i, r := range rule {
		if toks[i].redir || !toks[i].literal || toks[i].text != r {
			return fmt.Sprintf("word %d is not %q", i, r)
		}
	}
	for i := len(rule); i < len(toks); i++ {
		t := toks[i]
		if !t.redir || isFDDup(t.raw) {
			continue
		}
		if i+1 < len(toks) && toks[i+1].raw == "/dev/null" && strings.Trim(t.raw, "0123456789&<>") == "" {
			i++
			continue
		}
		return fmt.Sprintf("redirection %q", t.raw)
	}
	return ""
}

// isFDDup: a dup of one descriptor to another, as Bash prints "2>&1" and
// ">&2" ("1>&2").
var isFDDup = regexp.MustCompile(`^[0-9]*[<>]&[0-9]+$`).MatchString

// traceToken is one blank-separated token of a traced command.
type traceToken struct {
	raw     string
	text    string // quotes removed
	literal bool   // no unquoted or double-quoted $ or `, no unquoted glob
	redir   bool   // holds an unquoted < or >
}

// traceTokens splits a traced command on unquoted blanks. It is the
// oracle's own small reading of Bash's printed form, independent of the
// approvals package's parser, which it checks.
func traceTokens(s string) []traceToken {
	var (
		toks []traceToken
		cur  = traceToken{literal: true}
		in   bool
	)
	flush := func() {
		if in {
			toks = append(toks, cur)
		}
		cur, in = traceToken{literal: true}, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
				cur.literal = false
			}
			cur.text += s[i+1 : i+1+j]
			i += j + 1
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '$' || s[i] == '`' {
					cur.literal = false
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				cur.text += string(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.text += string(s[i])
		default:
			if strings.IndexByte("<>", c) >= 0 {
				cur.redir = true
			}
			if strings.IndexByte("$`*?[]{}~();&|!", c) >= 0 {
				cur.literal = false
			}
			cur.text += string(c)
		}
		cur.raw += s[start:min(i+1, len(s))]
		in = true
	}
	flush()
	return toks
}
