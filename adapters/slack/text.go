package slack

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// visible shows as escapes the characters that display as nothing or
// reorder what follows (controls, bidi overrides, zero-width marks), so
// that a command reads as what runs. Newlines and tabs stay.
func visible(s string) string {
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

// head is the longest start of s, in whole lines, for which fit holds; if
// not even the first line fits, as many of its runes as do. fit must hold
// for every start of an accepted start.
func head(s string, fit func(string) bool) string {
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

// runes counts the characters of s.
func runes(s string) int { return utf8.RuneCountInString(s) }
