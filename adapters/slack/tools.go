package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack/slackmd"
)

// Tool inputs: a one-line input up to inlineInputRunes shows as inline
// code in the tool's line, any other as a code block under it; a block
// over toolInputRunes (well under a section's 3,000) shows the input's
// head, and the whole input goes up as a file, once per tool call.
const (
	inlineInputRunes = 300
	toolInputRunes   = 2500
)

// upload is where a file the bot meant to attach went.
type upload int8

const (
	uploadNone   upload = iota // not needed, or not tried yet
	uploadDone                 // in the thread
	uploadFailed               // tried; the message says it is missing
)

// toolParts is a tool's message: its line (a context block) and, for an
// input too long for the line, a code block with every line of it.
func toolParts(t *adapters.Tool, input upload) []part {
	if t == nil {
		return []part{{text: " ", blocks: []slack.Block{slack.NewContextBlock("", mdText(" "))}}}
	}
	line := toolLine(t)
	blocks := []slack.Block{slack.NewContextBlock("", mdText(line))}
	if code := inputCode(t.Input, input); code != "" {
		blocks = append(blocks, slack.NewSectionBlock(mdText(code), nil, nil))
	}
	return []part{{text: line, blocks: blocks}}
}

// toolLine: "⚙ *Bash* `make test` · 12s — ok"; the input is there only
// when it is one short line.
func toolLine(t *adapters.Tool) string {
	mark := map[adapters.ToolState]string{adapters.ToolRunning: "⚙", adapters.ToolWaiting: "⏸", adapters.ToolOK: "✓", adapters.ToolFailed: "✗", adapters.ToolDenied: "⊘"}[t.State]
	s := strings.Repeat("    ", t.Depth) + mark + " *" + slackmd.Text(t.Name) + "*"
	if in := adapters.Visible(t.Input); inlineInput(in) {
		s += " " + slackmd.InlineCode(in)
	}
	s += t.Tail(200, slackmd.Text)
	return adapters.Cut(s, contextTextRunes)
}

func inlineInput(in string) bool {
	return in != "" && !strings.Contains(in, "\n") && runes(in) <= inlineInputRunes
}

// longInput: the tool's input does not fit its message whole.
func longInput(t *adapters.Tool) bool {
	if t == nil {
		return false
	}
	in := adapters.Visible(t.Input)
	return !inlineInput(in) && runes(slackmd.CodeBlock(in)) > toolInputRunes
}

// inputCode is a code block with every line of the input, or for a long
// one its head and where the rest is; "" when the line shows the input.
func inputCode(raw string, input upload) string {
	in := adapters.Visible(raw)
	if in == "" || inlineInput(in) {
		return ""
	}
	if whole := slackmd.CodeBlock(in); runes(whole) <= toolInputRunes {
		return whole
	}
	tail := func(h string) string {
		where := "the whole input is in the file above"
		if input != uploadDone {
			where = "the whole input could not be uploaded"
		}
		return fmt.Sprintf("_… cut here after %d of %d bytes: %s._", len(h), len(raw), where)
	}
	shown := func(h string) string { return slackmd.CodeBlock(h) + "\n" + tail(h) }
	return shown(adapters.Head(in, func(h string) bool { return runes(shown(h)) <= toolInputRunes }))
}

// uploadInput attaches a tool's whole long input to the thread.
func (a *Adapter) uploadInput(ctx context.Context, p *posted, t *adapters.Tool) upload {
	if err := a.uploadText(ctx, p.channel, p.thread, adapters.InputFileName(t.Name), t.Name+" input", t.Input); err != nil {
		a.log.Warn("slack: upload tool input", "err", err)
		return uploadFailed
	}
	return uploadDone
}

// uploadOutput attaches a long tool output to the thread as a file.
func (a *Adapter) uploadOutput(ctx context.Context, p *posted, t *adapters.Tool) {
	name := strings.ToLower(t.Name) + "-output.txt"
	if err := a.uploadText(ctx, p.channel, p.thread, name, t.Name+" output", t.Output); err != nil {
		a.log.Warn("slack: upload tool output", "err", err)
	}
}

// uploadText shares a text file in a thread (files.uploadV2: an upload URL,
// the bytes, then the share).
func (a *Adapter) uploadText(ctx context.Context, channel, thread, name, title, data string) error {
	return a.call(ctx, "files.getUploadURLExternal", channel, func(ctx context.Context) error {
		_, err := a.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Reader: strings.NewReader(data), FileSize: len(data), Filename: name,
			Title: title, Channel: channel, ThreadTimestamp: thread,
		})
		return err
	})
}
