package matrix

import (
	"encoding/json"
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/claudeops/claudeops/adapters"
)

func TestContentCannotPingOrForgePills(t *testing.T) {
	cases := []struct {
		name, md string
		// notInHTML must not appear in formatted_body.
		notInHTML []string
	}{
		{"room ping", "hey @room, deploy is done", []string{"@room"}},
		{"markdown pill", "ask [Alice](https://matrix.to/#/@alice:example.org) about it", []string{`href="https://matrix.to`}},
		{"matrix uri pill", "see [room](matrix:r/ops:example.org)", []string{`href="matrix:`}},
		{"raw html pill", `<a href="https://matrix.to/#/@alice:example.org">Alice</a>`, []string{"<a "}},
		{"raw html", "<script>alert(1)</script> **bold**", []string{"<script>"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := content(tc.md)
			if c.Mentions == nil || len(c.Mentions.UserIDs) != 0 || c.Mentions.Room {
				t.Errorf("m.mentions = %+v, want empty", c.Mentions)
			}
			if c.MsgType != event.MsgNotice {
				t.Errorf("msgtype %s, want m.notice", c.MsgType)
			}
			if strings.Contains(c.Body, "@room") {
				t.Errorf("body keeps a live @room: %q", c.Body)
			}
			for _, bad := range tc.notInHTML {
				if strings.Contains(c.FormattedBody, bad) {
					t.Errorf("formatted_body has %q: %s", bad, c.FormattedBody)
				}
			}
		})
	}
}

func TestContentRendersMarkdown(t *testing.T) {
	c := content("**bold** and `code`\n\n```go\nx := 1\n```")
	if c.Format != event.FormatHTML || !strings.Contains(c.FormattedBody, "<strong>bold</strong>") || !strings.Contains(c.FormattedBody, "<pre><code class=\"language-go\">") {
		t.Errorf("html = %q", c.FormattedBody)
	}
	if c.Body != "**bold** and `code`\n\n```go\nx := 1\n```" {
		t.Errorf("the plain body should be the Markdown source, got %q", c.Body)
	}
	if plain := content("just words"); plain.Format != "" {
		t.Errorf("plain text needs no HTML: %+v", plain)
	}
}

func TestSplitFitsEventsAndLosesNothing(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 70000; i++ {
		b.WriteString("Paragraph with **markup** & <angle> brackets, number ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString(".\n\n")
		if i%40 == 0 {
			b.WriteString("```\ncode line\n```\n\n")
		}
	}
	for _, text := range []string{b.String(), strings.Repeat("😀", 30000), strings.Repeat("<&>", 20000)} {
		parts := split(text)
		if len(parts) < 2 {
			t.Fatalf("%d runes in one part", len([]rune(text)))
		}
		var joined strings.Builder
		for i, p := range parts {
			joined.WriteString(p.md)
			raw, err := json.Marshal(editContent("$event:example.org", content(p.md)))
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > maxContentBytes {
				t.Errorf("part %d: edit is %d bytes, over %d", i, len(raw), maxContentBytes)
			}
		}
		if got := joined.String(); stripAddedFences(got) != stripAddedFences(text) {
			t.Errorf("parts do not add up to the text (%d vs %d bytes)", len(got), len(text))
		}
	}
}

// stripAddedFences removes fence lines, which Split repeats around cuts.
func stripAddedFences(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "```") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

func TestEditContentShape(t *testing.T) {
	e := editContent("$orig", content("new **text**"))
	raw, _ := json.Marshal(e)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	rel := m["m.relates_to"].(map[string]any)
	if rel["rel_type"] != "m.replace" || rel["event_id"] != "$orig" {
		t.Errorf("relation %v", rel)
	}
	nc := m["m.new_content"].(map[string]any)
	if nc["body"] != "new **text**" || nc["m.relates_to"] != nil || nc["msgtype"] != "m.notice" {
		t.Errorf("new content %v", nc)
	}
	if !strings.HasPrefix(m["body"].(string), "* ") {
		t.Errorf("fallback body %q", m["body"])
	}
}

func TestToolLine(t *testing.T) {
	got := toolLine(&adapters.Tool{Name: "Bash", Input: "make `test`", State: adapters.ToolOK, Elapsed: 1500e6, Preview: "ok\nmore"}, false)
	if want := "✓ **Bash** `` make `test` `` · 1.5s — ok …"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
