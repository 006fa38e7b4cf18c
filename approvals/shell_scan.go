package approvals

import (
	"errors"
	"strings"
)

// Deny rules: the lenient scanner.

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
	// substitutions, best effort.
	inner []string
	// err reports an unterminated quote or substitution, or too much nesting.
	err error
}

// scanBash splits cmd into simple commands, the way Bash would at the level
// of quotes, escapes, list and pipeline operators, comments and
// substitutions; it is not a full parser. With legacy set, $$' starts an
// ANSI-C quote as it did in the first version. It never panics; an input it
// cannot read sets err.
func scanBash(cmd string, legacy bool) bashScan {
	sc := bashScanner{s: cmd, legacy: legacy}
	parts, err := sc.list(0, 0)
	sc.out.parts = parts
	sc.out.err = err
	return sc.out
}

type bashScanner struct {
	s      string
	i      int
	legacy bool
	out    bashScan
}

func (sc *bashScanner) peek(off int) byte {
	if sc.i+off < len(sc.s) {
		return sc.s[sc.i+off]
	}
	return 0
}

// listState is what list keeps as it reads: the commands so far and the
// one being read.
type listState struct {
	parts []string
	cur   strings.Builder
	// wordStart: the next byte would begin a new shell word, which is
	// where '#' begins a comment.
	wordStart bool
	// redir: the previous byte was an unquoted '<' or '>', so '&' and '|'
	// belong to a redirection (2>&1, >|), not to a list or pipeline.
	redir  bool
	parens int
}

// flush ends the current command.
func (st *listState) flush() {
	if t := strings.Trim(st.cur.String(), " \t"); t != "" {
		st.parts = append(st.parts, t)
	}
	st.cur.Reset()
	st.wordStart, st.redir = true, false
}

// word adds s to the current command as part of a word.
func (st *listState) word(s string) {
	st.cur.WriteString(s)
	st.wordStart, st.redir = false, false
}

// list scans simple commands up to end: 0 is the end of the input, ')' closes
// $(…), <(…) and >(…), '`' closes a backtick substitution. On return sc.i is
// just past the terminator.
func (sc *bashScanner) list(end byte, depth int) ([]string, error) {
	if depth > maxBashNesting {
		return nil, errTooDeep
	}
	st := &listState{wordStart: true}
	// word copies s[start:sc.i] into the current command as part of a word.
	word := func(start int) { st.word(sc.s[start:sc.i]) }
	for sc.i < len(sc.s) {
		c, next := sc.s[sc.i], sc.peek(1)
		start := sc.i
		switch {
		case end == '`' && c == '`':
			sc.i++
			st.flush()
			return st.parts, nil
		case end == ')' && c == ')' && st.parens == 0:
			sc.i++
			st.flush()
			return st.parts, nil

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
				return st.parts, errUnterminated
			}
			sc.i += j + 2
			word(start)
		case c == '$' && next == '$' && !sc.legacy: // $$, so a ' after it is a plain quote
			sc.i += 2
			word(start)
		case c == '$' && next == '\'': // $'…': backslash escapes inside
			sc.i += 2
			if err := sc.ansiC(); err != nil {
				return st.parts, err
			}
			word(start)
		case c == '"':
			sc.i++
			if err := sc.double(depth); err != nil {
				return st.parts, err
			}
			word(start)
		case c == '$' && next == '(':
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return st.parts, err
			}
			word(start)
		case c == '`':
			sc.i++
			if err := sc.nested('`', depth); err != nil {
				return st.parts, err
			}
			word(start)
		case (c == '<' || c == '>') && next == '(':
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return st.parts, err
			}
			word(start)
		case c == '$' && next == '{':
			sc.i += 2
			word(start)

		default:
			sc.operator(st, c, next)
		}
	}
	if end != 0 {
		return st.parts, errUnterminated
	}
	st.flush()
	return st.parts, nil
}

// operator scans what list has left at sc.i, c then next: a comment, a list
// or pipeline operator, a redirection, a parenthesis, a blank, or else a
// plain byte of a word.
func (sc *bashScanner) operator(st *listState, c, next byte) {
	start := sc.i
	switch {
	case c == '#' && st.wordStart:
		for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
			sc.i++
		}
	case c == '\n' || c == ';':
		sc.i++
		st.flush()
	case c == '&':
		switch {
		case next == '&':
			sc.i += 2
			st.flush()
		case st.redir: // >& <&
			sc.i++
			st.cur.WriteByte(c)
			st.wordStart, st.redir = true, false
		case next == '>': // &> &>>
			sc.i++
			st.cur.WriteByte(c)
			st.wordStart, st.redir = true, false
		default: // background: the next command starts here
			sc.i++
			st.flush()
		}
	case c == '|':
		switch {
		case st.redir: // >|
			sc.i++
			st.cur.WriteByte(c)
			st.wordStart, st.redir = true, false
		case next == '|':
			sc.i += 2
			st.flush()
		default:
			sc.i++
			st.flush()
		}
	case c == '<' && next == '<':
		if sc.peek(2) == '<' { // here-string
			sc.i += 3
		} else {
			sc.i += 2
		}
		st.cur.WriteString(sc.s[start:sc.i])
		st.wordStart, st.redir = true, true
	case c == '<' || c == '>':
		sc.i++
		st.cur.WriteByte(c)
		st.wordStart, st.redir = true, true
	case c == '(' || c == ')':
		if c == '(' {
			st.parens++
		} else if st.parens > 0 {
			st.parens--
		}
		sc.i++
		st.cur.WriteByte(c)
		st.wordStart, st.redir = true, false
	case c == ' ' || c == '\t':
		sc.i++
		st.cur.WriteByte(c)
		st.wordStart, st.redir = true, false
	default:
		sc.i++
		st.word(sc.s[start:sc.i])
	}
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
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return err
			}
		case c == '`':
			sc.i++
			if err := sc.nested('`', depth); err != nil {
				return err
			}
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
