package slackmd

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/util"
)

// zwsp is U+200B ZERO WIDTH SPACE, the breaker inserted into mention syntax.
const zwsp = "\u200b"

// broadcastWords are the words that, after "@", notify a whole channel.
var broadcastWords = [...]string{"channel", "here", "everyone"}

// isBroadcastAt reports whether s[i:] starts (ASCII case-insensitively)
// with one of broadcastWords.
func isBroadcastAt(s string, i int) bool {
	for _, w := range broadcastWords {
		if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// Neutralize returns md with Slack's mention and link syntax made inert and
// nothing else changed. It is meant for standard Markdown handed to Slack's
// own renderer (the `markdown` block, the `markdown_text` argument), where
// HTML entities would show literally and so cannot be used:
//
//   - "<!…", "<@…", "<#…" get a U+200B after the "<" (covers <!channel>,
//     <!here>, <!everyone>, <!subteam^S…>, <!date^…>, <@U…>, <#C…|name>);
//   - bare "@channel", "@here", "@everyone" (any letter case) get a U+200B
//     after the "@".
//
// It works everywhere, code spans and fenced code included: whether Slack's
// Markdown renderer resolves mentions inside code is not documented, so it
// is assumed that it may. Entities such as "&lt;!here&gt;" are left alone:
// in standard Markdown they are text, not syntax.
func Neutralize(md string) string {
	if !strings.ContainsAny(md, "<@") {
		return md
	}
	var b strings.Builder
	b.Grow(len(md) + 16)
	for i := 0; i < len(md); i++ {
		c := md[i]
		b.WriteByte(c)
		switch c {
		case '<':
			if i+1 < len(md) && (md[i+1] == '!' || md[i+1] == '@' || md[i+1] == '#') {
				b.WriteString(zwsp)
			}
		case '@':
			if isBroadcastAt(md, i+1) {
				b.WriteString(zwsp)
			}
		}
	}
	return b.String()
}

// Settled returns the longest start of md whose neutralisation cannot
// change however md goes on, for text that arrives in pieces (a stream):
// Neutralize(Settled(md)) is a start of Neutralize(md+more) for every
// more, and Settled(md) is a start of Settled(md+more). What it holds back
// is a trailing "@" followed by the start of a broadcast word ("@", "@he",
// "@chan": it may yet become "@here", "@channel") and a trailing "<" (it
// may yet open "<!here>"). Sending Neutralize(Settled(text)) piece by
// piece therefore adds up to exactly what Neutralize(text) gives, however
// the text was cut; the held-back tail goes out once the text is final.
func Settled(md string) string {
	cut := len(md)
	if strings.HasSuffix(md, "<") {
		cut = len(md) - 1
	}
	for i := max(0, len(md)-len("everyone")); i < len(md); i++ { // the longest word
		if md[i] == '@' && startsBroadcast(md[i+1:]) {
			return md[:min(cut, i)]
		}
	}
	return md[:cut]
}

// startsBroadcast reports whether s is a proper start (ASCII
// case-insensitively, possibly empty) of one of broadcastWords.
func startsBroadcast(s string) bool {
	for _, w := range broadcastWords {
		if len(s) < len(w) && strings.EqualFold(s, w[:len(s)]) {
			return true
		}
	}
	return false
}

// neutralizeBroadcasts inserts U+200B after the "@" of bare broadcast
// mentions. It does not touch angle brackets.
func neutralizeBroadcasts(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] == '@' && isBroadcastAt(s, i+1) {
			b.WriteString(zwsp)
		}
	}
	return b.String()
}

// neutralizeOutsideLinks applies neutralizeBroadcasts to the mrkdwn text s
// except inside the <…> sequences of links this package produced (the only
// '<' left in ToMrkdwn output), whose URLs must stay intact. Link labels are
// neutralised when the link is built.
func neutralizeOutsideLinks(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			b.WriteString(neutralizeBroadcasts(s))
			break
		}
		b.WriteString(neutralizeBroadcasts(s[:lt]))
		gt := strings.IndexByte(s[lt:], '>')
		if gt < 0 {
			b.WriteString(neutralizeBroadcasts(s[lt:]))
			break
		}
		b.WriteString(s[lt : lt+gt+1])
		s = s[lt+gt+1:]
	}
	return b.String()
}

// escapeSlack applies Slack's escaping rule for mrkdwn: &, < and > become
// &amp; &lt; &gt; (and nothing else is entity-encoded).
func escapeSlack(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// breakFences inserts U+200B into every run of three backticks so that text
// or code content can never open or close a mrkdwn code block ("```" has no
// escape in mrkdwn).
func breakFences(s string) string {
	if !strings.Contains(s, "```") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			if run == 3 {
				b.WriteString(zwsp)
				run = 1
			}
		} else {
			run = 0
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// protectMarkers keeps literal mrkdwn markers in text literal. Markdown
// text can contain '*', '_', '~' and '`' that are not formatting ("\*not
// bold\*", "~/a and ~/b"), but mrkdwn has no escape for them. A marker that
// could open a span (at the start of a word, followed by a non-blank) and
// has a possible closer later on the same line gets a U+200B after it, which
// stops Slack from pairing it; every literal backtick on a line with another
// one gets one too. Markers without a partner are left alone, so "~/path" or
// "snake_case" copy as written.
func protectMarkers(s string) string {
	if !strings.ContainsAny(s, "*_~`") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, l := range strings.SplitAfter(s, "\n") {
		ticks := strings.Count(l, "`")
		// lastCloser[k]: last index of a marker that could close a span
		// (preceded by a non-blank), for '*', '_', '~'.
		lastCloser := [3]int{-1, -1, -1}
		for j := 1; j < len(l); j++ {
			if k := strings.IndexByte("*_~", l[j]); k >= 0 && !isBlankByte(l[j-1]) {
				lastCloser[k] = j
			}
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			b.WriteByte(c)
			switch c {
			case '`':
				if ticks > 1 {
					b.WriteString(zwsp)
				}
			case '*', '_', '~':
				if lastCloser[strings.IndexByte("*_~", c)] > i+1 && isMarkerOpener(l, i) {
					b.WriteString(zwsp)
				}
			}
		}
	}
	return b.String()
}

func isMarkerOpener(l string, i int) bool {
	if i+1 >= len(l) || isBlankByte(l[i+1]) {
		return false
	}
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(l[:i])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

func isBlankByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// esc is the escaping applied to every piece of literal text and code in
// mrkdwn.
func esc(s string) string { return breakFences(escapeSlack(s)) }

// escText is esc for Markdown text (not code): literal markers are protected
// too.
func escText(s string) string { return breakFences(protectMarkers(escapeSlack(s))) }

// unescapeMarkdown resolves what CommonMark resolves in text: backslash
// escapes of ASCII punctuation, named entities and numeric character
// references; NUL becomes U+FFFD. It is a single pass, so "\&amp;" stays the
// literal "&amp;".
func unescapeMarkdown(v []byte) string {
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]):
			b.WriteByte(v[i+1])
			i += 2
			continue
		case c == 0:
			b.WriteRune(utf8.RuneError)
			i++
			continue
		case c == '&':
			if r, n := decodeEntity(v[i:]); n > 0 {
				b.WriteString(r)
				i += n
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// decodeEntity decodes an HTML entity or numeric reference at the start of
// v ("&amp;", "&#35;", "&#x1F600;"), returning its text and length, or 0.
func decodeEntity(v []byte) (string, int) {
	if len(v) < 3 || v[0] != '&' {
		return "", 0
	}
	if v[1] == '#' {
		i, base := 2, 10
		if i < len(v) && (v[i] == 'x' || v[i] == 'X') {
			i, base = 3, 16
		}
		start := i
		for i < len(v) && i-start < 8 && isDigitBase(v[i], base) {
			i++
		}
		if i == start || i >= len(v) || v[i] != ';' || (base == 10 && i-start > 7) || (base == 16 && i-start > 6) {
			return "", 0
		}
		n, err := strconv.ParseUint(string(v[start:i]), base, 32)
		if err != nil {
			return "", 0
		}
		return string(util.ToValidRune(rune(n))), i + 1
	}
	i := 1
	for i < len(v) && i < 40 && util.IsAlphaNumeric(v[i]) {
		i++
	}
	if i == 1 || i >= len(v) || v[i] != ';' {
		return "", 0
	}
	e, ok := util.LookUpHTML5EntityByName(string(v[1:i]))
	if !ok {
		return "", 0
	}
	return string(e.Characters), i + 1
}

func isDigitBase(c byte, base int) bool {
	if c >= '0' && c <= '9' {
		return true
	}
	if base == 16 {
		return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
	}
	return false
}

// Text makes plain text literal in mrkdwn: no markup, no mentions, no
// code fences (for titles, labels, anything not Markdown).
func Text(s string) string { return neutralizeBroadcasts(escText(s)) }

// CodeBlock shows s as a ``` block, every character of it literal: nothing
// in s can end the block early, form a link or a mention, or notify.
func CodeBlock(s string) string {
	return fenceMark + "\n" + neutralizeBroadcasts(esc(s)) + "\n" + fenceMark
}

// InlineCode shows one line s as inline code. mrkdwn code spans cannot
// hold a backtick, so each shows as "ˋ"; nothing in s can notify.
func InlineCode(s string) string {
	return "`" + neutralizeBroadcasts(escapeSlack(strings.ReplaceAll(s, "`", "ˋ"))) + "`"
}
