package mdsplit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// ---- unit tests ----

func TestSplitShort(t *testing.T) {
	if got := Split("", 100); got != nil {
		t.Errorf("Split(\"\") = %q", got)
	}
	for _, s := range []string{"a", "hello\n\nworld", strings.Repeat("é", 100)} {
		got := Split(s, 100)
		if len(got) != 1 || got[0] != s {
			t.Errorf("Split(%q, 100) = %q, want it unchanged", s, got)
		}
	}
}

func TestSplitSmallLimitCutsRunes(t *testing.T) {
	for _, limit := range []int{-5, 0, 1, 2, 7, 63} {
		s := "```go\nhé😀 日本 &amp; <https://x.org|x>\n```\n" + strings.Repeat("ab ", 20)
		parts := checkSplit(t, s, limit, false)
		lim := max(limit, 1)
		for i, p := range parts[:len(parts)-1] {
			if utf8.RuneCountInString(p) != lim {
				t.Errorf("limit %d: part %d has %d runes", limit, i, utf8.RuneCountInString(p))
			}
		}
	}
}

// para is n copies of word joined by single spaces: a paragraph of known
// length for the preference cases below.
func para(word string, n int) string { return strings.TrimSpace(strings.Repeat(word+" ", n)) }

// splitPreferenceCases is TestSplitPreferences' table, at package level so
// the test stays short: each case names the cut Split should prefer and the
// first part it must produce.
var splitPreferenceCases = []struct {
	name      string
	in        string
	limit     int
	wantFirst string
}{
	{
		name:      "blank line beats line end",
		in:        para("aaaa", 14) + "\n\n" + para("bbbb", 5) + "\n" + para("cccc", 10),
		limit:     100,
		wantFirst: para("aaaa", 14) + "\n\n",
	},
	{
		name:      "line end beats space",
		in:        para("aaaa", 14) + "\n" + para("bbbb", 20),
		limit:     100,
		wantFirst: para("aaaa", 14) + "\n",
	},
	{
		name:      "blank line too early loses to a later line end",
		in:        "aaaa\n\n" + para("bbbb", 14) + "\n" + para("cccc", 20),
		limit:     100,
		wantFirst: "aaaa\n\n" + para("bbbb", 14) + "\n",
	},
	{
		name:      "space in a long line",
		in:        para("abcdefghi", 30),
		limit:     64,
		wantFirst: para("abcdefghi", 6) + " ",
	},
	{
		name:      "hard cut of a word",
		in:        strings.Repeat("x", 150),
		limit:     64,
		wantFirst: strings.Repeat("x", 64),
	},
	{
		name:      "runes not bytes",
		in:        strings.Repeat("😀", 150),
		limit:     64,
		wantFirst: strings.Repeat("😀", 64),
	},
	{
		name:      "not inside an entity",
		in:        strings.Repeat("x", 62) + "&amp;" + strings.Repeat("y", 60),
		limit:     64,
		wantFirst: strings.Repeat("x", 62),
	},
	{
		name:      "not inside a numeric reference",
		in:        strings.Repeat("x", 60) + "&#128512;" + strings.Repeat("y", 60),
		limit:     64,
		wantFirst: strings.Repeat("x", 60),
	},
	{
		name:      "not inside a link",
		in:        "see " + strings.Repeat("x", 40) + "<https://example.com/a/b|the docs> and more text after it",
		limit:     64,
		wantFirst: "see ",
	},
	{
		name:      "not inside a link without spaces",
		in:        strings.Repeat("x", 50) + "<https://example.com/a/b>" + strings.Repeat("y", 50),
		limit:     64,
		wantFirst: strings.Repeat("x", 50),
	},
	{
		name:      "not before a combining mark",
		in:        strings.Repeat("e\u0301", 100),
		limit:     64,
		wantFirst: strings.Repeat("e\u0301", 32),
	},
	{
		name:      "not inside a ZWJ sequence",
		in:        strings.Repeat("x", 62) + "👨\u200d👩\u200d👧" + strings.Repeat("y", 60),
		limit:     64,
		wantFirst: strings.Repeat("x", 62),
	},
	{
		name:      "not inside CRLF",
		in:        strings.Repeat("x", 63) + "\r\n" + strings.Repeat("y", 60),
		limit:     64,
		wantFirst: strings.Repeat("x", 63),
	},
	{
		name:      "CJK punctuation is a break",
		in:        strings.Repeat("日本語", 12) + "。" + strings.Repeat("中文", 40),
		limit:     64,
		wantFirst: strings.Repeat("日本語", 12) + "。",
	},
	{
		name:      "code block moves whole to the next part",
		in:        para("aaaa", 10) + "\n\n```go\nx := 1\ny := 2\n```\n" + para("bbbb", 10),
		limit:     64,
		wantFirst: para("aaaa", 10) + "\n\n",
	},
}

func TestSplitPreferences(t *testing.T) {
	for _, tt := range splitPreferenceCases {
		t.Run(tt.name, func(t *testing.T) {
			parts := checkSplit(t, tt.in, tt.limit, true)
			if len(parts) < 2 || parts[0] != tt.wantFirst {
				t.Errorf("first part = %q\nwant        %q\n(all: %q)", parts[0], tt.wantFirst, parts)
			}
		})
	}
}

func TestSplitCodeBlock(t *testing.T) {
	var b strings.Builder
	b.WriteString("Intro.\n\n```go\n")
	for i := range 40 {
		fmt.Fprintf(&b, "fmt.Println(%02d)\n", i)
	}
	b.WriteString("```\n\nOutro.")
	in := b.String()
	parts := checkSplit(t, in, 200, true)
	if len(parts) < 4 {
		t.Fatalf("expected several parts, got %d", len(parts))
	}
	for i, p := range parts {
		if i > 0 && i < len(parts)-1 && !strings.HasPrefix(p, "```go\n") {
			t.Errorf("part %d does not reopen the fence: %q", i, p)
		}
		if i < len(parts)-1 && !strings.HasSuffix(p, "\n```") {
			t.Errorf("part %d does not close the fence: %q", i, p)
		}
		if strings.Contains(p, "```\n```") || strings.HasSuffix(p, "```go\n```") {
			t.Errorf("part %d has an empty code block: %q", i, p)
		}
		if strings.HasSuffix(p, "\n\n```") && i < len(parts)-1 {
			t.Errorf("part %d has a blank line before the added fence: %q", i, p)
		}
	}
}

func TestSplitQuotedAndTildeFences(t *testing.T) {
	var q, tl strings.Builder
	q.WriteString("> ```\n")
	tl.WriteString("~~~~python\n")
	for i := range 30 {
		fmt.Fprintf(&q, "> line %02d of quoted code\n", i)
		fmt.Fprintf(&tl, "print(%02d)  # ``` not a fence here\n", i)
	}
	q.WriteString("> ```\nafter")
	tl.WriteString("~~~~\nafter")
	for _, tc := range []struct{ in, open, close string }{
		{q.String(), "> ```\n", "\n> ```"},
		{tl.String(), "~~~~python\n", "\n~~~~"},
	} {
		parts := checkSplit(t, tc.in, 150, true)
		for i, p := range parts {
			if i > 0 && i < len(parts)-1 && !strings.HasPrefix(p, tc.open) {
				t.Errorf("part %d does not start with %q: %q", i, tc.open, p)
			}
			if i < len(parts)-1 && !strings.HasSuffix(p, tc.close) {
				t.Errorf("part %d does not end with %q: %q", i, tc.close, p)
			}
		}
	}
}

func TestSplitLongCodeLine(t *testing.T) {
	in := "```\n" + strings.Repeat("x", 500) + "\n```"
	parts := checkSplit(t, in, 100, true)
	for i, p := range parts {
		if i > 0 && !strings.HasPrefix(p, "```\n") {
			t.Errorf("part %d does not reopen: %q", i, p)
		}
		if i < len(parts)-1 && !strings.HasSuffix(p, "\n```") {
			t.Errorf("part %d does not close: %q", i, p)
		}
	}
}

func TestSplitLongFenceLine(t *testing.T) {
	body := strings.Repeat("code line\n", 30)
	// A fence line too long to repeat is repeated without its info string.
	in := "```" + strings.Repeat("x", 80) + "\n" + body + "```\n"
	parts := checkSplit(t, in, 100, true)
	if !strings.HasPrefix(parts[1], "```\ncode line") {
		t.Errorf("short fence not repeated: %q", parts[1])
	}
	// With a larger limit the whole fence line is repeated.
	parts = checkSplit(t, in, 300, true)
	if !strings.HasPrefix(parts[1], "```"+strings.Repeat("x", 80)+"\n") {
		t.Errorf("fence line not repeated: %q", parts[1])
	}
	// A fence run that cannot be repeated within a third of the limit: the
	// block is cut like text and the parts are marked broken.
	fence := strings.Repeat("`", 40)
	in = fence + "\n" + body + fence + "\n"
	checkSplit(t, in, 100, false)
	if pieces := splitPieces(in, 100); !pieces[0].broken {
		t.Errorf("expected broken parts for an unrepeatable fence")
	}
}

func TestSplitDoesNotCreateFences(t *testing.T) {
	// A cut in the middle of a line must not leave "```" at the start of
	// the next part (it would open a code block there).
	in := strings.Repeat("word ", 11) + "```inline``` " + strings.Repeat("more ", 20)
	for limit := 64; limit < 90; limit++ {
		parts := checkSplit(t, in, limit, true)
		for i, p := range parts[1:] {
			if isFenceLine(strings.SplitN(p, "\n", 2)[0]) {
				t.Errorf("limit %d: part %d starts with a fence: %q", limit, i+1, p)
			}
		}
	}
}

// ---- realistic sizes ----

// longAnswer builds a text of at least minRunes runes from the long
// answer, the construct sampler and generated text. testdata holds copies of
// slackmd's inputs (long-markdown.md, constructs.md) and of their ToMrkdwn
// renderings (slackmd's *.mrkdwn.golden, here *.mrkdwn) as realistic
// Markdown and mrkdwn: ext is "md" or "mrkdwn". They are inputs here, not
// goldens; slackmd's TestSplitGolden splits the live ToMrkdwn output.
func longAnswer(t testing.TB, minRunes int, ext string) string {
	t.Helper()
	base, err := os.ReadFile(filepath.Join("testdata", "long-markdown."+ext))
	if err != nil {
		t.Fatal(err)
	}
	constructs, err := os.ReadFile(filepath.Join("testdata", "constructs."+ext))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; utf8.RuneCountInString(b.String()) < minRunes; i++ {
		switch i % 3 {
		case 0:
			b.Write(base)
		case 1:
			b.Write(constructs)
		default:
			b.WriteString(genText(r))
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

func TestSplit60k(t *testing.T) {
	mrkdwn := longAnswer(t, 60000, "mrkdwn")
	markdown := longAnswer(t, 60000, "md")
	for _, tc := range []struct {
		name  string
		text  string
		limit int
	}{
		{"mrkdwn/section-3000", mrkdwn, 3000},
		{"mrkdwn/text-4000", mrkdwn, 4000},
		{"mrkdwn/12000", mrkdwn, 12000},
		{"markdown/12000", markdown, 12000},
		{"markdown/3000", markdown, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := checkSplit(t, tc.text, tc.limit, true)
			n := utf8.RuneCountInString(tc.text)
			if maxParts := n/(tc.limit/2) + 2; len(parts) > maxParts {
				t.Errorf("%d parts for %d runes at %d: too many (max %d)", len(parts), n, tc.limit, maxParts)
			}
			for i, p := range parts[:len(parts)-1] {
				if !strings.HasSuffix(p, "\n") && !strings.HasSuffix(p, "```") && !strings.HasSuffix(p, "~~~") {
					t.Errorf("part %d does not end at a line end: %q", i, p[max(0, len(p)-40):])
				}
			}
		})
	}
}
