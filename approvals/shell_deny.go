package approvals

import (
	"slices"
	"strings"
)

// Deny rules: matching the commands the lenient scanner (scanBash) finds.

// denyBash reports whether a deny pattern matches any simple command of
// cmd, at top level or inside a substitution: as written, without leading
// assignments, or as words after quote removal with redirections dropped.
// cmd is read the way Bash reads it and also the way this scanner did
// before $$ was understood ($$'…' taken as ANSI-C), so deny rules match no
// less than they did. A command the scanner cannot read matches.
func denyBash(pattern, cmd string) bool {
	for _, legacy := range []bool{false, true} {
		sc := scanBash(cmd, legacy)
		if sc.err != nil {
			return true
		}
		for _, part := range slices.Concat(sc.parts, sc.inner) {
			if bashPartMatches(part, pattern) || bashPartMatches(stripAssignments(part), pattern) || looseMatches(part, pattern) {
				return true
			}
		}
	}
	return false
}

// stripAssignments drops leading NAME=value words ("FOO=1 BAR='a b' cmd" ->
// "cmd"). Only deny rules use it: for them, seeing through assignments is the
// strict reading. Quotes in values are skipped, not interpreted.
func stripAssignments(cmd string) string {
	for {
		n := nameLen(cmd)
		if n == 0 || n >= len(cmd) || cmd[n] != '=' {
			return cmd
		}
		end := wordEnd(cmd, n+1)
		if end < 0 {
			return cmd
		}
		cmd = strings.TrimLeft(cmd[end:], " \t")
	}
}

// wordEnd returns the index of the first unquoted blank at or after i, or
// len(s); -1 if a quote is not closed.
func wordEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t':
			return i
		case '\\':
			i += 2
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return -1
			}
			i += j + 2
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return -1
			}
			i++
		default:
			i++
		}
	}
	return len(s)
}

// bashPartMatches reports whether one simple command, as written, matches a
// Bash pattern: "prefix:*" matches the prefix alone or followed by a blank;
// anything else must be equal.
func bashPartMatches(part, pattern string) bool {
	prefix, ok := strings.CutSuffix(pattern, ":*")
	if !ok {
		return part == pattern
	}
	if prefix == "" {
		return false
	}
	if part == prefix {
		return true
	}
	return strings.HasPrefix(part, prefix) && (part[len(prefix)] == ' ' || part[len(prefix)] == '\t')
}

// looseMatches is bashPartMatches on words after quote removal, with
// leading assignments and redirections dropped: "'rm' -rf /" and
// ">/dev/null rm x" match "rm:*".
func looseMatches(part, pattern string) bool {
	prefix, isPrefix := strings.CutSuffix(pattern, ":*")
	rule, words := looseWords(prefix), looseWords(part)
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(rule) == 0 || len(words) < len(rule) || !isPrefix && len(words) != len(rule) {
		return false
	}
	return slices.Equal(words[:len(rule)], rule)
}

// isAssignment: w looks like NAME=value.
func isAssignment(w string) bool {
	n := nameLen(w)
	return n > 0 && n < len(w) && w[n] == '='
}

// looseWords splits a simple command into words after quote removal and
// drops its redirections; expansions stay as written. It never fails: an
// unterminated quote runs to the end.
func looseWords(s string) []string {
	var (
		words  []string
		b      strings.Builder
		inWord bool
		digits bool // the word so far is unquoted digits: a redirection's fd
	)
	flush := func() {
		if inWord {
			words = append(words, b.String())
		}
		b.Reset()
		inWord, digits = false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord, digits = true, false
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			inWord, digits = true, false
		case c == '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
			inWord, digits = true, false
		case c == '<' || c == '>' || c == '&' && i+1 < len(s) && s[i+1] == '>':
			if digits {
				inWord = false // the fd number is not a word
			}
			flush()
			i = skipRedirect(s, i) - 1
		default:
			digits = isDigit(c) && (digits || !inWord)
			b.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

// skipRedirect returns the index just past the redirection at s[i]: its
// operator and its target word (for a dup, the fd number).
func skipRedirect(s string, i int) int {
	for i < len(s) && strings.IndexByte("<>&|", s[i]) >= 0 {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if e := wordEnd(s, i); e >= 0 {
		return e
	}
	return len(s)
}
