// Package text is how the bot and its extensions put things into words in
// a thread: cut to a length, on one line, in the singular or the plural,
// as inline code nothing inside can end, a commit, a configured duration
// or a byte size in short (all in text.go). It is a leaf: it imports nothing of this repository but the
// port (adapters), for what makes untrusted text visible.
package text

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
)

// Shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// OneLine is the first line of s, marked when more followed.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CodeSpan shows untrusted text (a path the model chose) as inline code
// that nothing inside can end early: hidden characters escaped, newlines
// shown as \n, the fence longer than any run of backticks inside, cut to a
// readable length.
func CodeSpan(s string) string {
	s = strings.ReplaceAll(adapters.Visible(Shorten(s, 200)), "\n", `\n`)
	fence := Fence(s, 1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// Fence is a run of backticks at least least long and longer than any
// run in s: code fenced with it cannot be closed by s.
func Fence(s string, least int) string {
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(least, longest+1))
}

// ShortCommit is the short form of a commit id.
func ShortCommit(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

// Duration renders a configured duration as an operator wrote it: 1h, 90m,
// 2s (not 1h0m0s).
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Bytes renders n bytes for people: 512 B, 3.4 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
