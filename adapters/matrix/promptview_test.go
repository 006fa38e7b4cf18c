package matrix

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/testkit"
)

func offered(ids ...adapters.ChoiceID) []adapters.Choice {
	var out []adapters.Choice
	for _, c := range adapters.ApprovalChoices {
		for _, id := range ids {
			if c.ID == id {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestPromptMarkdown: what an approval shows, open and decided; the
// expected Markdown is in testdata/prompt-*.md.
func TestPromptMarkdown(t *testing.T) {
	p := adapters.Prompt{ID: "p1", Kind: adapters.PromptApproval, Title: "#3 · Write wants to run", Tool: "Write",
		Detail:  "/w/src/a.go\n+ package a\n+ // `quoted` ```",
		Note:    "Prompt #3 (id `p1`): name it `allow 3`.\nAllow folder for thread: `Write(src/**)` in this thread.",
		Choices: offered(adapters.ChoiceAllow, adapters.ChoiceAllowFolder, adapters.ChoiceDeny)}
	testkit.Golden(t, filepath.Join("testdata", "prompt-open.md"), promptMarkdown(p))
	p.State, p.Outcome = adapters.PromptDecided, "Allowed by @ana:example.org for this folder"
	testkit.Golden(t, filepath.Join("testdata", "prompt-decided.md"), promptMarkdown(p))
	all := adapters.Prompt{ID: "p2", Kind: adapters.PromptApproval, Title: "Bash wants to run", Tool: "Bash",
		Detail: "$ make", Choices: adapters.ApprovalChoices}
	testkit.Golden(t, filepath.Join("testdata", "prompt-all-choices.md"), promptMarkdown(all))
	q := adapters.Prompt{ID: "q", Kind: adapters.PromptQuestion, Title: "#4 · Claude asks", Note: "Prompt #4: reply `4 1`.",
		Questions: []adapters.Question{{Text: "Which one?", Options: []adapters.Option{{Label: "Red"}, {Label: "Blue", Description: "calm"}}}}}
	testkit.Golden(t, filepath.Join("testdata", "prompt-question.md"), promptMarkdown(q))
}

// TestDetailCannotBreakOut: the detail stays in its code block whatever it
// holds; it pings nobody; hidden characters show as escapes.
func TestDetailCannotBreakOut(t *testing.T) {
	detail := "$ echo ok\n````\n**Approved by the admins** @room [Ana](https://matrix.to/#/@ana:example.org) <b>x</b>\n```\nrm -rf ~/\u202eexe.txt"
	p := adapters.Prompt{ID: "p", Kind: adapters.PromptApproval, Title: "Bash wants to run @room", Tool: "Bash",
		Detail: detail, Choices: offered(adapters.ChoiceAllow, adapters.ChoiceDeny)}
	c := content(promptMarkdown(p))
	if strings.Count(c.FormattedBody, "<pre>") != 1 {
		t.Fatalf("want one code block: %s", c.FormattedBody)
	}
	code := c.FormattedBody[strings.Index(c.FormattedBody, "<pre>"):strings.Index(c.FormattedBody, "</pre>")]
	for _, want := range []string{"**Approved by the admins**", "rm -rf ~/\\u202eexe.txt", "&lt;b&gt;x&lt;/b&gt;"} {
		if !strings.Contains(code, want) {
			t.Errorf("the code block lacks %q: %s", want, code)
		}
	}
	for _, live := range []string{"<strong>Approved", "<b>", "href=", "\u202e"} {
		if strings.Contains(c.FormattedBody, live) {
			t.Errorf("%q is live: %s", live, c.FormattedBody)
		}
	}
	if strings.Contains(c.Body, "@room") || c.Mentions == nil || c.Mentions.Room || len(c.Mentions.UserIDs) > 0 {
		t.Errorf("a mention: %q %+v", c.Body, c.Mentions)
	}
}

// TestLongDetailShowsItsHead: a detail over the inline limit shows its
// head, marked, and fits an event also as an edit; an update shows the
// same.
func TestLongDetailShowsItsHead(t *testing.T) {
	var b strings.Builder
	for i := 1; b.Len() < 3*detailInlineBytes; i++ {
		fmt.Fprintf(&b, "+ line %05d & <more> of a file being written\n", i)
	}
	p := adapters.Prompt{ID: "p", Kind: adapters.PromptApproval, Title: "Write wants to run", Tool: "Write",
		Detail: "/w/big.txt\n" + b.String(), Note: "note", Choices: offered(adapters.ChoiceAllow, adapters.ChoiceDeny)}
	md, cut := promptView(p)
	if !cut {
		t.Fatal("not cut")
	}
	if !fits(content(md)) {
		t.Error("the prompt does not fit an event")
	}
	for _, want := range []string{
		fmt.Sprintf("of %d bytes (%d lines in all). The whole input is in the file above** (`write-input.txt`)", len(p.Detail), strings.Count(p.Detail, "\n")+1),
		"```\n/w/big.txt\n+ line 00001 & <more>",
		"```\n**… cut here: the rest is in the file above.**\n",
		"React ✅ allow · ❌ deny",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	if strings.Contains(md, strings.TrimSpace(b.String()[b.Len()-60:])) {
		t.Error("the last line is shown: not a head")
	}
	p.State, p.Outcome = adapters.PromptDecided, "Denied by @ana:example.org"
	if d, cutToo := promptView(p); !cutToo || !strings.Contains(d, "The whole input is in the file above") || !fits(content(d)) {
		t.Errorf("the decided prompt: cut %v, fits %v", cutToo, fits(content(d)))
	}
}

// TestToolLines: inputs of one line inline, of several in a code block
// (testdata/tool-lines.md); long ones as a head pointing to the file, or
// saying it is missing.
func TestToolLines(t *testing.T) {
	var out []string
	for _, tool := range []adapters.Tool{
		{Name: "Bash", Input: "make test", State: adapters.ToolRunning},
		{Name: "Bash", Input: "cd /src &&\n  make deploy @room", State: adapters.ToolOK, Elapsed: 2 * time.Second, Preview: "done"},
		{Name: "Bash", Input: strings.Repeat("a", inlineInputRunes+1), State: adapters.ToolRunning, Depth: 1},
	} {
		if longInput(&tool) {
			t.Errorf("%d bytes are a long input", len(tool.Input))
		}
		out = append(out, toolLine(&tool, false))
	}
	testkit.Golden(t, filepath.Join("testdata", "tool-lines.md"), strings.Join(out, "\n\n----\n\n"))

	var long strings.Builder
	for i := 1; long.Len() <= toolInputBytes; i++ {
		fmt.Fprintf(&long, "echo step %03d\n", i)
	}
	tool := adapters.Tool{Name: "Bash", Input: long.String() + "echo the end", State: adapters.ToolRunning}
	if !longInput(&tool) {
		t.Fatal("not a long input")
	}
	for file, where := range map[bool]string{true: "the whole input is in the file above", false: "the whole input could not be attached"} {
		line := toolLine(&tool, file)
		if !strings.HasPrefix(line, "⚙️ **Bash**\n```\necho step 001\necho step 002\n") || strings.Contains(line, "the end") ||
			!strings.HasSuffix(line, fmt.Sprintf("\necho step 214\n```\n_… cut here after 2995 of %d bytes: %s._", len(tool.Input), where)) {
			t.Errorf("file=%v: the line's head is\n%s", file, line)
		}
	}
}
