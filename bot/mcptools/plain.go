package mcptools

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Plain text out of the model's or a chat user's text: valid UTF-8, line
// ends as "\n", no control characters and no invisible format characters
// (bidi overrides, zero-width joiners) that would make what is shown
// differ from what was written. Markup is not touched: escaping it is the
// adapter's job, which shows such text as its own plain text.

// maxCommentRunes caps a send_file comment: a note, not a message.
const maxCommentRunes = 1000

// plainText keeps newlines (at most two in a row) and turns tabs into
// spaces; it trims the ends and cuts at maxRunes, marking the cut.
func plainText(s string, maxRunes int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	newlines, runes := 0, 0
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			newlines++
			if newlines > 2 {
				continue
			}
			r = '\n'
		case r == '\t':
			newlines = 0
			r = ' '
		case invisible(r):
			continue
		default:
			newlines = 0
		}
		if runes == maxRunes {
			return strings.TrimSpace(b.String()) + "…"
		}
		b.WriteRune(r)
		runes++
	}
	return strings.TrimSpace(b.String())
}

// plainLine is plainText on one line: line breaks become spaces.
func plainLine(s string, maxRunes int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	return plainText(s, maxRunes)
}

// invisible: control characters other than line breaks and tabs, and
// format characters (Cf).
func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// truncate cuts s to at most n bytes, on a rune boundary, for messages.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
