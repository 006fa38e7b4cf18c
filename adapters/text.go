package adapters

import (
	"fmt"
	"strings"
)

// Visible shows as escapes the characters that display as nothing, move
// the cursor, restyle a terminal (ESC) or reorder what follows (controls,
// bidi overrides, zero-width marks), so that untrusted text, a command
// above all, reads as what it is. Newlines and tabs stay: split lines
// first where a newline must not pass either.
func Visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !hidden(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2069, r == 0xfeff:
		return true
	}
	return false
}

// Head is the longest start of s, in whole lines, for which fit holds; if
// not even the first line fits, as many of its runes as do. fit must hold
// for every start of an accepted start.
func Head(s string, fit func(string) bool) string {
	lines := strings.SplitAfter(s, "\n")
	n := longest(len(lines), func(k int) bool { return fit(strings.TrimSuffix(strings.Join(lines[:k], ""), "\n")) })
	if n > 0 {
		return strings.TrimSuffix(strings.Join(lines[:n], ""), "\n")
	}
	r := []rune(strings.TrimSuffix(lines[0], "\n"))
	n = longest(len(r), func(k int) bool { return fit(string(r[:k])) })
	return string(r[:n])
}

// longest is the largest k in [0, n] with ok(k), ok being monotonic
// (ok(0) is assumed).
func longest(n int, ok func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// InputFileName names the file holding a tool's whole input when it does
// not fit a message.
func InputFileName(tool string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, strings.ToLower(tool))
	if name == "" {
		return "input.txt"
	}
	return name + "-input.txt"
}
