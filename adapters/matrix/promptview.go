package matrix

import (
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
)

// detailInlineBytes bounds the detail a prompt shows inline, well under
// the 64 KiB of an event (its edit carries it twice, with HTML, and
// encryption adds a third). A longer detail goes up whole as a file, and
// the prompt shows its head.
const detailInlineBytes = 16 << 10

// promptMarkdown shows a prompt: what is asked and how to answer while it
// is open; the outcome once it is not.
func promptMarkdown(p adapters.Prompt) string {
	md, _ := promptView(p)
	return md
}

// promptView renders p; cut reports that its detail did not fit whole, so
// only its head is shown and the whole detail must be in a file above.
// It depends on p alone: an update renders what Ask rendered.
func promptView(p adapters.Prompt) (md string, cut bool) {
	if p.Kind != adapters.PromptApproval {
		return questionMarkdown(p), false
	}
	if p.Detail == "" {
		return approvalMarkdown(p, ""), false
	}
	whole := approvalMarkdown(p, fence(adapters.Visible(p.Detail)))
	if len(p.Detail) <= detailInlineBytes && fits(content(whole)) {
		return whole, false
	}
	shown := func(h string) string { return approvalMarkdown(p, headBlock(p, h)) }
	h := adapters.Head(adapters.Visible(p.Detail), func(h string) bool {
		return len(h) <= detailInlineBytes && fits(content(shown(h)))
	})
	return shown(h), true
}

// headBlock shows the head h of p's detail, marked as such.
func headBlock(p adapters.Prompt, h string) string {
	return fmt.Sprintf("⚠️ **Only the head of the input is shown here: %d of %d bytes (%d lines in all). The whole input is in the file above** (`%s`).\n\n%s**… cut here: the rest is in the file above.**\n",
		len(h), len(p.Detail), strings.Count(p.Detail, "\n")+1, adapters.InputFileName(p.Tool), fence(h))
}

func promptHeading(p adapters.Prompt) string {
	mark := map[adapters.PromptState]string{adapters.PromptPending: "🔐", adapters.PromptDecided: "☑️", adapters.PromptExpired: "⌛", adapters.PromptCancelled: "🚫"}[p.State]
	if p.Kind == adapters.PromptQuestion && p.State == adapters.PromptPending {
		mark = "❓"
	}
	if p.State == adapters.PromptDecided && strings.HasPrefix(p.Outcome, "Denied") {
		mark = "❌"
	}
	s := fmt.Sprintf("%s **%s**", mark, escapeMD(p.Title))
	if p.State != adapters.PromptPending && p.Outcome != "" {
		s += " — " + escapeMD(p.Outcome)
	}
	return s + "\n\n"
}

// approvalMarkdown: the heading, the detail as rendered, and while the
// prompt is open its note and how to answer.
func approvalMarkdown(p adapters.Prompt, detail string) string {
	var b strings.Builder
	b.WriteString(promptHeading(p))
	b.WriteString(detail)
	if p.State != adapters.PromptPending {
		return b.String()
	}
	if p.Note != "" {
		b.WriteString("\n" + p.Note + "\n")
	}
	b.WriteString("\n" + choicesHint(p.Choices))
	return b.String()
}

// choicesHint says how to make each offered choice: its reaction, its
// typed form.
func choicesHint(choices []adapters.Choice) string {
	var react, typed []string
	for _, c := range choices {
		if k, ok := approvalKeys[c.ID]; ok {
			react = append(react, k+" "+strings.ToLower(c.Label))
			typed = append(typed, code(c.Typed))
		}
	}
	if len(react) == 0 {
		return ""
	}
	or := typed[len(typed)-1]
	if len(typed) > 1 {
		or = strings.Join(typed[:len(typed)-1], ", ") + " or " + or
	}
	return "React " + strings.Join(react, " · ") + " — or reply " + or + "."
}

func questionMarkdown(p adapters.Prompt) string {
	var b strings.Builder
	b.WriteString(promptHeading(p))
	for i, q := range p.Questions {
		if len(p.Questions) > 1 {
			fmt.Fprintf(&b, "**%d.** ", i+1)
		}
		if q.Header != "" {
			fmt.Fprintf(&b, "**%s** ", escapeMD(q.Header))
		}
		b.WriteString(escapeMD(q.Text))
		if q.Multi {
			b.WriteString(" _(several answers possible)_")
		}
		b.WriteString("\n\n")
		if p.State != adapters.PromptPending {
			continue
		}
		for j, o := range q.Options {
			fmt.Fprintf(&b, "%d. **%s**", j+1, escapeMD(o.Label))
			if o.Description != "" {
				fmt.Fprintf(&b, " — %s", escapeMD(o.Description))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if p.State == adapters.PromptPending {
		if p.Note != "" {
			b.WriteString(p.Note + "\n\n")
		}
		how := "Vote in the poll, react with the option's number, or reply with the option number"
		if len(p.Questions) > 1 {
			how = "Vote in the polls, or reply with the option number, one question after the other"
		}
		b.WriteString(how + " (several: `1,3`), or type your own answer. `deny <reason>` declines.")
	}
	return b.String()
}

// fence puts s in a code block whose fence no line of s can close.
func fence(s string) string {
	n := 3
	for run, i := 0, 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + "\n" + s + "\n" + f + "\n"
}
