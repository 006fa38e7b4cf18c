package approvals

import (
	"errors"
	"strings"
)

// This file splits a Bash command line into simple commands, the way Bash
// would at the level that matters for permission rules: quotes, escapes,
// list and pipeline operators, comments, and substitutions. It is not a full
// shell parser. Where it cannot be sure, it says so (bashScan.complex, err),
// and allow rules then refuse to match: a human is asked instead.

// maxBashNesting bounds recursion into $(…), `…`, <(…) and >(…).
const maxBashNesting = 32

var (
	errUnterminated = errors.New("unterminated quote or substitution")
	errTooDeep      = errors.New("substitutions nested too deeply")
)

// bashScan is the result of splitting a command line.
type bashScan struct {
	// parts are the top-level simple commands, trimmed of blanks, without
	// comments, in order. Empty commands (";;", a trailing "&") are dropped.
	parts []string
	// inner are the simple commands found inside command and process
	// substitutions, best effort. Only deny rules look at them.
	inner []string
	// complex, when not empty, names the first construct that keeps an allow
	// rule with a pattern from matching: a command or process substitution,
	// a heredoc, a ${…} expansion, a comment, or an unquoted parenthesis
	// (subshell, function definition, arithmetic, array).
	complex string
	// err reports an unterminated quote or substitution, or too much nesting.
	err error
}

// scanBash splits cmd into simple commands. It never panics and never fails
// silently: an input it cannot read sets err.
func scanBash(cmd string) bashScan {
	sc := bashScanner{s: cmd}
	parts, err := sc.list(0, 0)
	sc.out.parts = parts
	sc.out.err = err
	return sc.out
}

type bashScanner struct {
	s   string
	i   int
	out bashScan
}

func (sc *bashScanner) flag(reason string) {
	if sc.out.complex == "" {
		sc.out.complex = reason
	}
}

func (sc *bashScanner) peek(off int) byte {
	if sc.i+off < len(sc.s) {
		return sc.s[sc.i+off]
	}
	return 0
}

// list scans simple commands up to end: 0 is the end of the input, ')' closes
// $(…), <(…) and >(…), '`' closes a backtick substitution. On return sc.i is
// just past the terminator.
func (sc *bashScanner) list(end byte, depth int) ([]string, error) {
	if depth > maxBashNesting {
		return nil, errTooDeep
	}
	var (
		parts []string
		cur   strings.Builder
		// wordStart: the next byte would begin a new shell word, which is
		// where '#' begins a comment.
		wordStart = true
		// redir: the previous byte was an unquoted '<' or '>', so '&' and '|'
		// belong to a redirection (2>&1, >|), not to a list or pipeline.
		redir  = false
		parens = 0
	)
	flush := func() {
		if t := strings.Trim(cur.String(), " \t"); t != "" {
			parts = append(parts, t)
		}
		cur.Reset()
		wordStart, redir = true, false
	}
	// word copies s[start:sc.i] into the current command as part of a word.
	word := func(start int) {
		cur.WriteString(sc.s[start:sc.i])
		wordStart, redir = false, false
	}
	for sc.i < len(sc.s) {
		c, next := sc.s[sc.i], sc.peek(1)
		start := sc.i
		switch {
		case end == '`' && c == '`':
			sc.i++
			flush()
			return parts, nil
		case end == ')' && c == ')' && parens == 0:
			sc.i++
			flush()
			return parts, nil

		case c == '\\':
			if next == '\n' { // line continuation: Bash removes both bytes
				sc.i += 2
				continue
			}
			sc.i = min(sc.i+2, len(sc.s))
			word(start)
		case c == '\'':
			j := strings.IndexByte(sc.s[sc.i+1:], '\'')
			if j < 0 {
				return parts, errUnterminated
			}
			sc.i += j + 2
			word(start)
		case c == '$' && next == '\'': // $'…': backslash escapes inside
			sc.i += 2
			if err := sc.ansiC(); err != nil {
				return parts, err
			}
			word(start)
		case c == '"':
			sc.i++
			if err := sc.double(depth); err != nil {
				return parts, err
			}
			word(start)
		case c == '$' && next == '(':
			sc.flag("command substitution")
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return parts, err
			}
			word(start)
		case c == '`':
			sc.flag("command substitution")
			sc.i++
			if err := sc.nested('`', depth); err != nil {
				return parts, err
			}
			word(start)
		case (c == '<' || c == '>') && next == '(':
			sc.flag("process substitution")
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return parts, err
			}
			word(start)
		case c == '$' && next == '{':
			// Quoting and '#' inside ${…} follow rules of their own; rather
			// than model them, allow rules refuse the command.
			sc.flag("${…} expansion")
			sc.i += 2
			word(start)

		case c == '#' && wordStart:
			sc.flag("comment")
			for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
				sc.i++
			}
		case c == '\n' || c == ';':
			sc.i++
			flush()
		case c == '&':
			switch {
			case next == '&':
				sc.i += 2
				flush()
			case redir: // >& <&
				sc.i++
				cur.WriteByte(c)
				wordStart, redir = true, false
			case next == '>': // &> &>>
				sc.i++
				cur.WriteByte(c)
				wordStart, redir = true, false
			default: // background: the next command starts here
				sc.i++
				flush()
			}
		case c == '|':
			switch {
			case redir: // >|
				sc.i++
				cur.WriteByte(c)
				wordStart, redir = true, false
			case next == '|':
				sc.i += 2
				flush()
			default:
				sc.i++
				flush()
			}
		case c == '<' && next == '<':
			if sc.peek(2) == '<' { // here-string
				sc.i += 3
			} else {
				sc.flag("heredoc")
				sc.i += 2
			}
			cur.WriteString(sc.s[start:sc.i])
			wordStart, redir = true, true
		case c == '<' || c == '>':
			sc.i++
			cur.WriteByte(c)
			wordStart, redir = true, true
		case c == '(' || c == ')':
			sc.flag("parenthesis")
			if c == '(' {
				parens++
			} else if parens > 0 {
				parens--
			}
			sc.i++
			cur.WriteByte(c)
			wordStart, redir = true, false
		case c == ' ' || c == '\t':
			sc.i++
			cur.WriteByte(c)
			wordStart, redir = true, false
		default:
			sc.i++
			word(start)
		}
	}
	if end != 0 {
		return parts, errUnterminated
	}
	flush()
	return parts, nil
}

// nested scans a substitution body; its commands are kept for deny rules.
func (sc *bashScanner) nested(end byte, depth int) error {
	parts, err := sc.list(end, depth+1)
	sc.out.inner = append(sc.out.inner, parts...)
	return err
}

// double scans the rest of a double-quoted string; sc.i is just past the
// opening quote and ends just past the closing one.
func (sc *bashScanner) double(depth int) error {
	for sc.i < len(sc.s) {
		c, next := sc.s[sc.i], sc.peek(1)
		switch {
		case c == '"':
			sc.i++
			return nil
		case c == '\\':
			sc.i = min(sc.i+2, len(sc.s))
		case c == '$' && next == '(':
			sc.flag("command substitution")
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return err
			}
		case c == '`':
			sc.flag("command substitution")
			sc.i++
			if err := sc.nested('`', depth); err != nil {
				return err
			}
		case c == '$' && next == '{':
			sc.flag("${…} expansion")
			sc.i += 2
		default:
			sc.i++
		}
	}
	return errUnterminated
}

// ansiC scans the rest of a $'…' string; sc.i is just past the opening quote.
func (sc *bashScanner) ansiC() error {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case '\\':
			sc.i = min(sc.i+2, len(sc.s))
		case '\'':
			sc.i++
			return nil
		default:
			sc.i++
		}
	}
	return errUnterminated
}

// stripAssignments drops leading NAME=value words ("FOO=1 BAR='a b' cmd" ->
// "cmd"). Only deny rules use it: for them, seeing through assignments is the
// strict reading. Quotes in values are skipped, not interpreted.
func stripAssignments(cmd string) string {
	for {
		n := 0
		for n < len(cmd) && (cmd[n] == '_' || isAlpha(cmd[n]) || (n > 0 && isDigit(cmd[n]))) {
			n++
		}
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

// trimCommand trims what Bash ignores around a command: blanks and
// newlines. Other white space (\r, \f, Unicode spaces) is part of a word to
// Bash, so it stays and keeps the command from matching.
func trimCommand(s string) string { return strings.Trim(s, " \t\n") }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// bashPartMatches reports whether one simple command matches a Bash pattern:
// "prefix:*" matches the prefix alone or followed by a blank; anything else
// must be equal.
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

// matchBash applies a Bash pattern to a command. See Rule.Matches.
func matchBash(pattern, cmd string, deny bool) bool {
	pattern, cmd = trimCommand(pattern), trimCommand(cmd)
	if cmd == "" || pattern == "" {
		return false
	}
	// An exact pattern is a string a human approved (or forbade) as a whole,
	// typically by "Allow for thread" on a compound command: equal is a match.
	if !strings.HasSuffix(pattern, ":*") && cmd == pattern {
		return true
	}
	sc := scanBash(cmd)
	if sc.err != nil {
		return deny // unreadable: deny rules fail closed, allow rules do not match
	}
	if deny {
		for _, parts := range [][]string{sc.parts, sc.inner} {
			for _, p := range parts {
				if bashPartMatches(p, pattern) || bashPartMatches(stripAssignments(p), pattern) {
					return true
				}
			}
		}
		return false
	}
	if sc.complex != "" || len(sc.parts) == 0 {
		return false
	}
	for _, p := range sc.parts {
		if !bashPartMatches(p, pattern) {
			return false
		}
	}
	return true
}

// broadCommands run other commands or arbitrary code given as arguments, so a
// "cmd:*" rule derived from one approval would allow anything. DerivePattern
// keeps the exact command for them.
var broadCommands = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "csh": true, "tcsh": true,
	"env": true, "sudo": true, "doas": true, "su": true, "xargs": true, "eval": true, "exec": true,
	"command": true, "builtin": true, "nohup": true, "nice": true, "ionice": true, "time": true,
	"timeout": true, "watch": true, "strace": true, "ssh": true, "source": true, ".": true,
	"find": true, "busybox": true, "npx": true,
	"python": true, "python2": true, "python3": true, "node": true, "nodejs": true, "deno": true,
	"bun": true, "perl": true, "ruby": true, "php": true, "lua": true, "osascript": true,
	"pwsh": true, "powershell": true,
}

// deriveBash returns "word:*" for a single plain simple command, else the
// exact trimmed command, or "" when that ends in ":*" and so would read as a
// prefix rule.
func deriveBash(cmd string) string {
	cmd = trimCommand(cmd)
	if cmd == "" {
		return ""
	}
	exact := cmd
	if strings.HasSuffix(cmd, ":*") {
		exact = "" // it would read as a prefix rule: nothing expresses it exactly
	}
	sc := scanBash(cmd)
	if sc.err != nil || sc.complex != "" || len(sc.parts) != 1 {
		return exact
	}
	first, _, _ := strings.Cut(strings.ReplaceAll(sc.parts[0], "\t", " "), " ")
	// The base name counts too: /usr/bin/env, ./bash.
	if !plainWord(first) || broadCommands[first] || broadCommands[first[strings.LastIndexByte(first, '/')+1:]] {
		return exact
	}
	return first + ":*"
}

// plainWord: a command name without quoting, expansion or assignment.
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(isAlpha(c) || isDigit(c) || strings.IndexByte("_./+-@%", c) >= 0) {
			return false
		}
	}
	return true
}
