package adapters

import "time"

// MessageKind says how a message should be shown.
type MessageKind int

const (
	// KindText is Claude's text: Markdown, streamed (Final false) and then
	// complete (Final true).
	KindText MessageKind = iota
	// KindTool is one tool's activity line, edited as the tool runs.
	KindTool
	// KindNotice is something the bot says: errors, queue positions, command
	// output. Markdown.
	KindNotice
	// KindFooter ends a turn: duration, cost, turns.
	KindFooter
)

// ToolState is where a tool call stands.
type ToolState int

const (
	ToolRunning ToolState = iota
	ToolOK
	ToolFailed
	// ToolDenied: the call was not allowed.
	ToolDenied
	// ToolWaiting: the call waits for a person's decision (an approval or
	// an answer); it has not started, so no time runs on its line. It
	// becomes ToolRunning when allowed, ToolDenied when not.
	ToolWaiting
)

// Done: the call has ended (ran, failed or was denied); its line will not
// change again.
func (s ToolState) Done() bool { return s == ToolOK || s == ToolFailed || s == ToolDenied }

// WaitingText is what a waiting tool's line says: who it waits for.
func (t *Tool) WaitingText() string {
	if t.Name == "AskUserQuestion" {
		return "waiting for an answer"
	}
	return "waiting for approval"
}

// Tail is what a tool line says after its name and input: how long the
// call has run, then what it waits for, or, ended, the first line of its
// result cut to previewRunes and made safe by esc (the platform's markup
// escaping: the result is the tool's, untrusted).
func (t *Tool) Tail(previewRunes int, esc func(string) string) string {
	s := ""
	if t.Elapsed > 0 {
		s += " · " + FormatDuration(t.Elapsed)
	}
	switch {
	case t.State == ToolWaiting:
		s += " — " + t.WaitingText()
	case t.State.Done() && t.Preview != "":
		s += " — " + esc(Cut(FirstLine(t.Preview), previewRunes))
	}
	return s
}

// Tool is a tool activity line: "⚙ Bash `make test` 12s" → "✓ Bash `make test` 14s: ok".
type Tool struct {
	Name string
	// Input is the key input: the command, the path, the URL, the pattern.
	// A command is whole, every line of it: an adapter shows every line,
	// and uploads as a file what does not fit its tool line.
	Input   string
	State   ToolState
	Elapsed time.Duration
	// Preview is the first part of the tool's output (or error).
	Preview string
	// Output is the whole output once the tool has finished, for adapters
	// that can attach it (a file) when it is long.
	Output string
	// Depth > 0 nests a subagent's tool under the Agent call that runs it.
	Depth int
}

// Message is something the bot posts in a thread.
type Message struct {
	Kind MessageKind
	// Text is Markdown (KindText, KindNotice, KindFooter).
	Text string
	// Final marks a streamed text message as complete.
	Final bool
	// Tool is set for KindTool.
	Tool *Tool
	// Error marks notices and footers that report a failure.
	Error bool
}
