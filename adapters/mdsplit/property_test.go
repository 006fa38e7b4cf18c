package mdsplit

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// ---- property test ----

var genWords = []string{
	"the", "quick", "fox", "é", "naïve", "✓", "😀", "👍🏽", "👨\u200d👩\u200d👧", "日本語", "中文", "e\u0301",
	"&amp;", "&lt;", "&gt;", "&#128512;", "&lt;!here&gt;", "<https://example.com/a?b=1&amp;c=2|link>",
	"<https://x.org>", "<@U0123>", "*bold*", "_it_", "`code`", "a\tb", "@\u200bhere", "x>y", "a<b",
}

func genWord(r *rand.Rand) string {
	if r.IntN(4) == 0 {
		return genWords[r.IntN(len(genWords))]
	}
	n := 1 + r.IntN(10)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

func genText(r *rand.Rand) string {
	var b strings.Builder
	blocks := 1 + r.IntN(12)
	for range blocks {
		switch r.IntN(8) {
		case 0, 1: // paragraph
			for i, n := 0, 3+r.IntN(80); i < n; i++ {
				if i > 0 {
					if r.IntN(15) == 0 {
						b.WriteString("\n")
					} else {
						b.WriteString(" ")
					}
				}
				b.WriteString(genWord(r))
			}
		case 2, 3: // fenced code
			fence := []string{"```", "```", "~~~", "````", "> ```"}[r.IntN(5)]
			prefix := ""
			if strings.HasPrefix(fence, ">") {
				prefix = "> "
			}
			lang := []string{"", "go", "python", "sh", "json"}[r.IntN(5)]
			b.WriteString(fence + lang + "\n")
			for i, n := 0, r.IntN(30); i < n; i++ {
				b.WriteString(prefix)
				if r.IntN(8) == 0 {
					b.WriteString(strings.Repeat(genWord(r), 5+r.IntN(60)))
				} else {
					for j, m := 0, r.IntN(8); j < m; j++ {
						b.WriteString(strings.Repeat(" ", r.IntN(3)))
						b.WriteString(genWord(r))
					}
				}
				b.WriteString("\n")
			}
			b.WriteString(fence)
		case 4: // list
			for i, n := 0, 1+r.IntN(8); i < n; i++ {
				b.WriteString([]string{"• ", "    ◦ ", "1. ", "- "}[r.IntN(4)])
				for j, m := 0, 1+r.IntN(12); j < m; j++ {
					b.WriteString(genWord(r) + " ")
				}
				b.WriteString("\n")
			}
		case 5: // long line without spaces
			for i, n := 0, 10+r.IntN(80); i < n; i++ {
				b.WriteString(genWord(r))
			}
		case 6: // CJK text
			for i, n := 0, 20+r.IntN(200); i < n; i++ {
				b.WriteRune(rune(0x4e00 + r.IntN(0x5000)))
				if r.IntN(30) == 0 {
					b.WriteString("。")
				}
			}
		case 7: // quote
			for i, n := 0, 1+r.IntN(4); i < n; i++ {
				b.WriteString("> " + genWord(r) + " " + genWord(r) + "\n")
			}
		}
		b.WriteString([]string{"\n\n", "\n", "\n\n\n", "\r\n", " "}[r.IntN(5)])
	}
	return b.String()
}

func TestSplitProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	iterations := 2000
	if testing.Short() {
		iterations = 300
	}
	for i := range iterations {
		text := genText(r)
		var limit int
		switch r.IntN(6) {
		case 0:
			limit = 1 + r.IntN(63)
		case 1:
			limit = 64 + r.IntN(30)
		default:
			limit = 64 + r.IntN(600)
		}
		// Strict guarantees need fence lines that fit comfortably in a
		// part (the generator joins a closing fence and following text
		// with a blank now and then, making long fence-like lines).
		strict := limit >= minStructuredLimit
		for _, l := range strings.Split(text, "\n") {
			if isFenceLine(l) && utf8.RuneCountInString(l) > limit/4 {
				strict = false
			}
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkSplit(t, text, limit, strict)
		})
		if t.Failed() {
			t.Logf("limit %d, input %q", limit, text)
			return
		}
	}
}

// ---- fuzzing ----

func FuzzSplit(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(genText(r), 64+r.IntN(300))
	}
	f.Add("```go\nx\n```", 64)
	f.Add("> ```\n> a\n> ```", 70)
	f.Add(strings.Repeat("😀", 200), 64)
	f.Add("a\xffb\xc3", 1)
	f.Add("```\n"+strings.Repeat("\n", 3000), 64)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit < 0 {
			limit = -limit
		}
		limit %= 1000
		checkSplit(t, text, limit, false)
	})
}

// TestSplitAdversarial runs degenerate inputs through the invariants; they
// also guard against quadratic behaviour (each is tens of kilobytes).
func TestSplitAdversarial(t *testing.T) {
	inputs := map[string]string{
		"angles":        strings.Repeat("<", 30000),
		"open angle":    "<" + strings.Repeat("a", 30000),
		"ampersands":    strings.Repeat("&", 30000),
		"entities":      strings.Repeat("&amp;", 6000),
		"links":         strings.Repeat("<https://x.org/a|b>", 2000),
		"spaces":        strings.Repeat(" ", 30000),
		"newlines":      strings.Repeat("\n", 30000),
		"crlf":          strings.Repeat("\r\n", 15000),
		"fences":        strings.Repeat("```\n", 8000),
		"fence-like":    strings.Repeat("```a`b\n", 4000),
		"tilde fences":  strings.Repeat("~~~\nx\n", 5000),
		"backticks":     strings.Repeat("`", 30000),
		"quote fences":  strings.Repeat("> ```\n> x\n", 3000),
		"huge fence":    "```" + strings.Repeat("`", 20000) + "\n" + strings.Repeat("x\n", 10000),
		"empty blocks":  strings.Repeat("```\n```\n", 4000),
		"combining":     strings.Repeat("e\u0301\u0302", 10000),
		"zwj":           strings.Repeat("👨\u200d", 10000),
		"invalid utf8":  strings.Repeat("\xff\xc3(", 10000),
		"long lines":    strings.Repeat("\n"+strings.Repeat("x", 3100), 10),
		"headings only": strings.Repeat("# h\n\n", 6000),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			for _, limit := range []int{64, 100, 3000, 12000} {
				checkSplit(t, in, limit, false)
			}
		})
	}
}
