package slack

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/mdsplit"
	"github.com/claudeops/claudeops/adapters/slack/slackmd"
)

// maxNoteSections bounds the sections of a prompt's note: a message's
// blocks hold about 13,000 characters of text in all, and the title and
// the detail may take 3,000 each.
const maxNoteSections = 2

func section(mrkdwn string) slack.Block { return slack.NewSectionBlock(mdText(mrkdwn), nil, nil) }

// promptBlocks lays a prompt out; it depends on p alone, so an update
// shows what Ask showed.
func promptBlocks(p adapters.Prompt) []slack.Block {
	var blocks []slack.Block
	if p.Kind == adapters.PromptApproval {
		blocks = approvalBlocks(p)
	} else {
		blocks = questionBlocks(p)
	}
	if p.State != adapters.PromptPending && p.Outcome != "" {
		blocks = append(blocks, slack.NewContextBlock("", mdText(adapters.Cut(slackmd.ToMrkdwn(p.Outcome), contextTextRunes))))
	}
	return blocks
}

// approvalBlocks: the title, the detail, and while the prompt is open its
// note and one button per offered choice.
func approvalBlocks(p adapters.Prompt) []slack.Block {
	blocks := []slack.Block{section(adapters.Cut("*"+slackmd.Text(p.Title)+"*", sectionTextRunes))}
	if p.Detail != "" {
		detail, _ := detailView(p)
		blocks = append(blocks, section(detail))
	}
	if p.State != adapters.PromptPending {
		return blocks
	}
	blocks = append(blocks, noteBlocks(p.Note)...)
	if buttons := choiceButtons(p); len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("approval:"+adapters.Cut(p.ID, 200), buttons...))
	}
	for _, c := range p.Choices {
		if c.ID == adapters.ChoiceDeny {
			blocks = append(blocks, slack.NewContextBlock("", mdText("To deny with a reason, reply `deny <reason>` in this thread.")))
		}
	}
	return blocks
}

// detailView is the detail's section: a code block with all of it, or
// when that does not fit its head, marked, under a pointer to the file
// with all of it (cut: Ask uploads that file before the prompt).
func detailView(p adapters.Prompt) (text string, cut bool) {
	if p.Kind != adapters.PromptApproval || p.Detail == "" {
		return "", false
	}
	in := adapters.Visible(p.Detail)
	if whole := slackmd.CodeBlock(in); runes(whole) <= sectionTextRunes {
		return whole, false
	}
	shown := func(h string) string {
		return fmt.Sprintf("⚠️ *Only the head of the input is shown here: %d of %d bytes (%d lines in all). The whole input is in the file above* (%s).\n%s\n*… cut here: the rest is in the file above.*",
			len(h), len(p.Detail), strings.Count(p.Detail, "\n")+1, slackmd.InlineCode(adapters.InputFileName(p.Tool)), slackmd.CodeBlock(h))
	}
	return shown(adapters.Head(in, func(h string) bool { return runes(shown(h)) <= sectionTextRunes })), true
}

// noteBlocks show the prompt's note (Markdown), made inert like Claude's
// text.
func noteBlocks(note string) []slack.Block {
	if note == "" {
		return nil
	}
	chunks := mdsplit.Split(slackmd.ToMrkdwn(note), sectionTextRunes-40)
	if len(chunks) > maxNoteSections {
		chunks = chunks[:maxNoteSections]
		chunks[maxNoteSections-1] += "\n_… (the rest of this note is cut)_"
	}
	var blocks []slack.Block
	for _, c := range chunks {
		blocks = append(blocks, section(c))
	}
	return blocks
}

// choiceButtons: one per offered choice, its id in the action id.
func choiceButtons(p adapters.Prompt) []slack.BlockElement {
	var els []slack.BlockElement
	for _, c := range p.Choices {
		b := slack.NewButtonBlockElement(actionApproval+string(c.ID), p.ID, plainText(adapters.Cut(c.Label, 75)))
		switch c.ID {
		case adapters.ChoiceAllow:
			b = b.WithStyle(slack.StylePrimary)
		case adapters.ChoiceDeny:
			b = b.WithStyle(slack.StyleDanger)
		}
		els = append(els, b)
	}
	return els
}

// questionBlocks: each question with its options, and while the prompt is
// open its controls (buttons, a select, or checkboxes and Submit).
func questionBlocks(p adapters.Prompt) []slack.Block {
	pending := p.State == adapters.PromptPending
	var blocks []slack.Block
	anyMulti := false
	for qi, q := range p.Questions {
		blocks = append(blocks, section(adapters.Cut(questionText(q), sectionTextRunes)))
		if !pending || len(q.Options) == 0 {
			continue
		}
		anyMulti = anyMulti || q.Multi
		blocks = append(blocks, questionControls(p.ID, qi, q))
	}
	if pending {
		blocks = append(blocks, noteBlocks(p.Note)...)
		if anyMulti || len(p.Questions) > 1 {
			blocks = append(blocks, slack.NewActionBlock("submit:"+adapters.Cut(p.ID, 200),
				slack.NewButtonBlockElement(actionSubmit, p.ID, plainText("Submit")).WithStyle(slack.StylePrimary)))
		}
		blocks = append(blocks, slack.NewContextBlock("", mdText("Or reply in this thread with the option number(s), or your own answer.")))
	}
	return blocks
}

func questionText(q adapters.Question) string {
	head := "*" + slackmd.Text(q.Text) + "*"
	if q.Header != "" {
		head = slackmd.InlineCode(q.Header) + " " + head
	}
	lines := []string{head}
	for oi, o := range q.Options {
		l := fmt.Sprintf("%d. %s", oi+1, slackmd.Text(o.Label))
		if o.Description != "" {
			l += " — " + slackmd.Text(o.Description)
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// questionControls: checkboxes for a multi-select, buttons for a few
// options, a select for more.
func questionControls(promptID string, qi int, q adapters.Question) slack.Block {
	bid := fmt.Sprintf("question:%d:%s", qi, adapters.Cut(promptID, 200))
	var opts []*slack.OptionBlockObject
	for oi, o := range q.Options {
		opts = append(opts, slack.NewOptionBlockObject(strconv.Itoa(oi+1), plainText(adapters.Cut(o.Label, 75)), nil))
	}
	switch {
	case q.Multi:
		return slack.NewActionBlock(bid, slack.NewCheckboxGroupsBlockElement(actionCheck+strconv.Itoa(qi), opts[:min(len(opts), 10)]...))
	case len(q.Options) <= maxButtons:
		var els []slack.BlockElement
		for oi, o := range q.Options {
			els = append(els, slack.NewButtonBlockElement(fmt.Sprintf("%s%d_%d", actionAnswer, qi, oi+1), promptID, plainText(adapters.Cut(o.Label, 75))))
		}
		return slack.NewActionBlock(bid, els...)
	default:
		return slack.NewActionBlock(bid, slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plainText("Choose"), actionSelect+strconv.Itoa(qi), opts[:min(len(opts), 100)]...))
	}
}
