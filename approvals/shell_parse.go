package approvals

import (
	"errors"
	"fmt"
	"strings"
)

// Allow rules: the whitelist grammar. See shell.go.

// shWord is one word of a simple command.
type shWord struct {
	// text is the word after quote removal, as the program gets it when the
	// word is literal; otherwise it still holds $NAME and glob bytes.
	text string
	// literal: no expansion can change the word. It holds no $NAME and no
	// unquoted glob (* ? [ ]), brace ({ }) or tilde (~) byte.
	literal bool
}

// shCommand is one simple command of the allow grammar.
type shCommand struct {
	words  []shWord
	redirs int // harmless redirections: to /dev/null, or fd dups
}

// parseAllow reads cmd under the allow grammar and returns its simple
// commands, or an error naming the first construct outside the grammar.
//
// Accepted: simple commands joined by ; & && || | |& and newlines; words made
// of unquoted bytes from [A-Za-z0-9_./,:@%+=^~*?[]{}] (# not first), a
// backslash before printable ASCII, '…', "…" holding no $ but $NAME and
// ${NAME} and no backquote, and unquoted $NAME or ${NAME}; the redirections
// N>&M (N, M in 0-2) and [N]> [N]>> [N]< &> &>> to exactly /dev/null.
//
// Everything else is refused: $'…', $"…", ${…} with operators, special
// parameters, $(…), $((…)), $[…], backquotes, <(…), >(…), line
// continuations, comments, heredocs and here-strings, ( ) and other
// redirections, !, non-ASCII bytes outside single quotes, and control
// bytes but tab and newline anywhere.
func parseAllow(cmd string) ([]shCommand, error) {
	// Bash marks quoted bytes internally with \x01 and \x7f, and C strings
	// end at NUL: control bytes are refused even inside quotes.
	if i := strings.IndexFunc(cmd, func(r rune) bool { return r < ' ' && r != '\t' && r != '\n' || r == 0x7f }); i >= 0 {
		return nil, fmt.Errorf("byte %d: control byte %q", i, cmd[i])
	}
	p := allowParser{s: cmd}
	if err := p.list(); err != nil {
		return nil, fmt.Errorf("byte %d: %w", p.i, err)
	}
	return p.cmds, nil
}

type allowParser struct {
	s       string
	i       int
	cmds    []shCommand
	cur     shCommand
	started bool // cur has a word or a redirection
}

func (p *allowParser) peek(off int) byte {
	if p.i+off < len(p.s) {
		return p.s[p.i+off]
	}
	return 0
}

// end closes the current simple command.
func (p *allowParser) end() {
	p.cmds = append(p.cmds, p.cur)
	p.cur, p.started = shCommand{}, false
}

// list reads the whole input.
func (p *allowParser) list() error {
	// needCmd: the last operator (&& || | |&) takes a command on its right.
	needCmd := false
	for p.i < len(p.s) {
		c, next := p.s[p.i], p.peek(1)
		var err error
		switch {
		case c == ' ' || c == '\t':
			p.i++
		case c == '\n':
			// Ends a command. Blank lines, and newlines after && || |, are
			// nothing to Bash.
			p.i++
			if p.started {
				p.end()
			}
		case c == ';' || c == '&' && next != '&' && next != '>':
			err = p.op(1)
		case c == '&' && next == '&', c == '|' && (next == '|' || next == '&'):
			err = p.op(2)
			needCmd = true
		case c == '|':
			err = p.op(1)
			needCmd = true
		case c == '<' || c == '>' || c == '&' || c >= '0' && c <= '2' && (next == '<' || next == '>'):
			err = p.redirect()
			needCmd = false
		default:
			err = p.word()
			needCmd = false
		}
		if err != nil {
			return err
		}
	}
	if needCmd {
		return errors.New("operator without a command after it")
	}
	if p.started {
		p.end()
	}
	return nil
}

// op ends the current command at an n-byte operator. An empty command
// before an operator is a syntax error (";;", "& &", a leading "|").
func (p *allowParser) op(n int) error {
	if !p.started {
		return fmt.Errorf("%q without a command before it", p.s[p.i:p.i+n])
	}
	p.end()
	p.i += n
	return nil
}

// redirect reads a redirection that can neither run anything nor write a
// file: N>&M with N and M in 0-2, or [N]>, [N]>>, [N]<, &>, &>> to exactly
// /dev/null. Other files are refused: > writes them, and < opens
// /dev/tcp/… as a network connection.
func (p *allowParser) redirect() error {
	hasFD := isDigit(p.s[p.i])
	if hasFD {
		p.i++
	}
	op := ""
	for _, o := range []string{"&>>", "&>", ">>", ">&", ">", "<"} {
		if strings.HasPrefix(p.s[p.i:], o) {
			op = o
			break
		}
	}
	if op == "" || hasFD && op[0] == '&' {
		return errors.New("redirection")
	}
	p.i += len(op)
	if op == ">&" {
		if c := p.peek(0); c < '0' || c > '2' {
			return errors.New("redirection with >& to other than fd 0-2")
		}
		p.i++
	} else {
		for p.peek(0) == ' ' || p.peek(0) == '\t' {
			p.i++
		}
		if !strings.HasPrefix(p.s[p.i:], "/dev/null") {
			return errors.New("redirection to other than /dev/null")
		}
		p.i += len("/dev/null")
	}
	if p.i < len(p.s) && !endsWord(p.s[p.i]) {
		return errors.New("redirection target goes on")
	}
	p.cur.redirs++
	p.started = true
	return nil
}

// endsWord: bytes that end an unquoted word.
func endsWord(c byte) bool { return strings.IndexByte(" \t\n;&|<>", c) >= 0 }

// word reads one word.
func (p *allowParser) word() error {
	var b strings.Builder
	w := shWord{literal: true}
	start := p.i
	for p.i < len(p.s) && !endsWord(p.s[p.i]) {
		c := p.s[p.i]
		var err error
		switch {
		case c == '\'':
			err = p.single(&b)
		case c == '"':
			err = p.double(&b, &w)
		case c == '\\':
			err = p.escape(&b)
		case c == '$':
			err = p.param(&b, &w)
		case c == '#' && p.i == start:
			err = errors.New("comment")
		case unquotedSafe(c):
			b.WriteByte(c)
			p.i++
			if strings.IndexByte("*?[]{}~", c) >= 0 {
				w.literal = false
			}
		default:
			err = fmt.Errorf("%q outside quotes", c)
		}
		if err != nil {
			return err
		}
	}
	// {NAME}>file opens a file descriptor into a variable, and 2>x would
	// read as one: a redirection must be set apart from a word by a blank.
	if rest := p.s[p.i:]; strings.HasPrefix(rest, "<") || strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "&>") {
		return errors.New("redirection right after a word")
	}
	w.text = b.String()
	p.cur.words = append(p.cur.words, w)
	p.started = true
	return nil
}

// unquotedSafe: bytes that mean nothing to Bash inside a word, or expand
// only to file names or paths (globs, braces, tilde), never to code.
func unquotedSafe(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("_-./,:@%+=^~*?[]{}#", c) >= 0
}

// single reads '…': every byte inside is literal.
func (p *allowParser) single(b *strings.Builder) error {
	j := strings.IndexByte(p.s[p.i+1:], '\'')
	if j < 0 {
		return errors.New("unterminated single quote")
	}
	b.WriteString(p.s[p.i+1 : p.i+1+j])
	p.i += j + 2
	return nil
}

// double reads "…". Only $NAME and ${NAME} expand; a backslash escapes
// $ ` " and \ and is kept before anything else.
func (p *allowParser) double(b *strings.Builder, w *shWord) error {
	p.i++
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return nil
		case '\\':
			switch n := p.peek(1); n {
			case '$', '`', '"', '\\':
				b.WriteByte(n)
				p.i += 2
			case '\n':
				return errors.New("line continuation")
			default:
				b.WriteByte('\\')
				p.i++
			}
		case '$':
			if err := p.param(b, w); err != nil {
				return err
			}
		case '`':
			return errors.New("command substitution")
		default:
			// In BIG5, GBK or Shift JIS a non-ASCII byte and the \ or `
			// after it are one character, which would move the quote's end.
			if c >= 0x80 {
				return errors.New("non-ASCII byte inside double quotes")
			}
			b.WriteByte(c)
			p.i++
		}
	}
	return errors.New("unterminated double quote")
}

// escape reads a backslash outside quotes: before a printable ASCII byte,
// blank or tab it makes that byte literal. Before a newline it would join
// lines, which is refused.
func (p *allowParser) escape(b *strings.Builder) error {
	n := p.peek(1)
	if n == '\n' {
		return errors.New("line continuation")
	}
	if n != '\t' && (n < ' ' || n > '~') {
		return errors.New("backslash before a control or non-ASCII byte, or at the end")
	}
	b.WriteByte(n)
	p.i += 2
	return nil
}

// param reads $NAME or ${NAME}. A plain variable's value can become words,
// never code. Anything else after $ (special parameters such as $$, ANSI-C
// and locale quotes, ${…} operators, substitutions) is refused.
func (p *allowParser) param(b *strings.Builder, w *shWord) error {
	j := p.i + 1
	braced := p.peek(1) == '{'
	if braced {
		j++
	}
	n := nameLen(p.s[j:])
	if n == 0 {
		return errors.New("$ not followed by a variable name")
	}
	j += n
	if braced {
		if j >= len(p.s) || p.s[j] != '}' {
			return errors.New("${…} with more than a name")
		}
		j++
	}
	b.WriteString(p.s[p.i:j])
	p.i = j
	w.literal = false
	return nil
}
