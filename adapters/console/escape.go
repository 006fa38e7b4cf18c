package console

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// The console writes text nobody vouches for (the model's, tools' output,
// file names, what was typed) to a terminal. A terminal obeys what it is
// sent: ESC and CSI sequences move the cursor, clear lines, retitle the
// window or make hyperlinks (OSC 8); CR and backspace overwrite what was
// printed; bidi overrides reorder it; zero-width characters hide it. So
// every line is written through put, which shows each such character as an
// escape ("\x1b", "\u202e"), and invalid UTF-8 byte by byte ("\xff"): the
// only control byte that reaches the terminal is the newline that ends a
// line, and nothing printed can pass for another line or for a prompt's
// outcome. A tab is expanded to spaces, to stops every 8 columns counted
// from the start of the text (after the line's prefix), so that indented
// code reads as in an editor.

// tabWidth is the distance between tab stops.
const tabWidth = 8

// hidden reports whether r must not reach the terminal as it is: C0
// controls (the newline included: a line is ended by endLine only), DEL,
// C1 controls (U+0080–U+009F: CSI, OSC… on terminals that read them), the
// line and paragraph separators, and every format character (Cf: bidi
// embeddings, overrides and isolates, zero-width spaces and joiners, the
// BOM, soft hyphens, tag characters).
func hidden(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// put writes s to the current output line, escaped, and keeps the line's
// column (for tab stops). The caller holds a.mu.
func (a *Adapter) put(s string) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			a.col += a.escape(`\x%02x`, rune(s[i]))
		case r == '\t':
			n := tabWidth - a.col%tabWidth
			for range n {
				a.out.WriteByte(' ')
			}
			a.col += n
		case hidden(r) && r < 0x80:
			a.col += a.escape(`\x%02x`, r)
		case hidden(r):
			a.col += a.escape(`\u%04x`, r)
		default:
			a.out.WriteString(s[i : i+size])
			a.col++
		}
		i += size
	}
}

// escape writes r in format and returns the columns it took.
func (a *Adapter) escape(format string, r rune) int {
	n, _ := fmt.Fprintf(a.out, format, r)
	return n
}

// prefix writes a line's prefix ("[main] claude: "), escaped: the text's
// columns count from after it.
func (a *Adapter) prefix(s string) {
	a.put(s)
	a.col = 0
}

// endLine ends the current output line.
func (a *Adapter) endLine() {
	a.out.WriteByte('\n')
	a.col = 0
}

// visibleName: a thread name (it prefixes every line, and is part of the
// thread's key) is valid UTF-8 without spaces, controls or format
// characters.
func visibleName(name string) bool {
	if !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if hidden(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}
