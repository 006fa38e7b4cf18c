package adapters

import (
	"context"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// ThreadRef addresses one conversation: a Slack thread, a Matrix thread, a
// console thread. Platform names the adapter ("slack", "matrix", "console").
type ThreadRef struct {
	Platform string
	// Channel is the Slack channel id (or team/channel), the Matrix room id,
	// "console" for the console.
	Channel string
	// Thread is the thread root: Slack thread_ts, Matrix root event id, the
	// console thread's name.
	Thread string
}

// Key is the thread's stable identity in the store.
func (t ThreadRef) Key() string { return t.Platform + "/" + t.Channel + "/" + t.Thread }

// ChannelKey identifies the thread's channel across threads.
func (t ThreadRef) ChannelKey() string { return t.Platform + "/" + t.Channel }

func (t ThreadRef) String() string { return t.Key() }

// MessageRef addresses one message the bot posted, for edits.
type MessageRef struct {
	Thread ThreadRef
	ID     string
}

// User is who sent an event, as the platform identifies them. ID is the
// immutable id decisions are checked against; Name is for display.
type User struct {
	ID   string
	Name string
}

// EventKind says what an Event carries.
type EventKind int

const (
	// EventMessage is a message posted in a thread.
	EventMessage EventKind = iota
	// EventAction is a click on one of the bot's prompts (a button, a
	// reaction, a poll vote).
	EventAction
)

// File is a file attached to a message. Its content is not fetched when
// the event is built: the bot calls Open only once it knows the sender may
// use it and has found the thread, and reads no more than its size limit.
// Name, MimeType and Size are what the sender declared: untrusted.
type File struct {
	Name     string
	MimeType string
	// Size is the declared size in bytes, 0 when unknown. The read is
	// capped whatever it says.
	Size int64
	// Open starts the download. The caller reads what it wants and closes
	// the reader; an error from Close means the content must not be used
	// (an encrypted file whose hash does not match). Safe to call from any
	// goroutine; it may block until ctx ends.
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// Event is what an adapter delivers to the bot.
type Event struct {
	Kind   EventKind
	Thread ThreadRef
	// MessageID is the message's identity on its platform, the dedupe key:
	// Slack team/channel/ts, a Matrix event id. Two deliveries of the same
	// post carry the same MessageID.
	MessageID string
	User      User
	// Text of a message, without the mention of the bot.
	Text string
	// Mentioned is true when the message addressed the bot (a mention, a
	// DM, a slash command, the console).
	Mentioned bool
	Files     []File

	// For EventAction: the prompt clicked and the choice made.
	PromptID string
	// Choice is one of the Choice* ids: an approval choice, ChoiceAnswer
	// for a question, ChoiceStop for a Stop control.
	Choice string
	// Values are the selected option numbers (1-based, as text) or free text.
	Values []string
	// Answers, for a question prompt answered with its controls: one entry
	// per question, the chosen option numbers (1-based, comma-separated),
	// "" where that question was left unanswered.
	Answers []string
	// Reason comes with a deny.
	Reason string

	At time.Time
}

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
)

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

// PromptKind says what a prompt asks.
type PromptKind int

const (
	// PromptApproval asks whether a tool may run: Allow / Allow for thread /
	// Always allow / Deny.
	PromptApproval PromptKind = iota
	// PromptQuestion asks Claude's AskUserQuestion questions.
	PromptQuestion
)

// Choice ids: what a click carries back in Event.Choice.
const (
	ChoiceAllow       = "allow"        // this request once
	ChoiceAllowThread = "allow_thread" // the same call for the rest of the thread (a file write: that file)
	ChoiceAllowFolder = "allow_folder" // a file write: its folder, for the rest of the thread
	ChoiceAllowAlways = "allow_always" // a channel rule; offered to admins only
	ChoiceDeny        = "deny"         // with an optional reason
	ChoiceAnswer      = "answer"       // a question answered with its controls
	ChoiceStop        = "stop"         // the Stop control of a running turn
)

// ApprovalChoices are every approval choice, in the order every platform
// shows them. A prompt offers the subset in its Choices; an adapter shows
// exactly those, and a click on any other is refused by the bot.
var ApprovalChoices = []Choice{
	{ID: ChoiceAllow, Label: "Allow", Typed: "allow"},
	{ID: ChoiceAllowThread, Label: "Allow for thread", Typed: "allow thread"},
	{ID: ChoiceAllowFolder, Label: "Allow folder for thread", Typed: "allow folder"},
	{ID: ChoiceAllowAlways, Label: "Always allow", Typed: "allow always"},
	{ID: ChoiceDeny, Label: "Deny", Typed: "deny [reason]"},
}

// Choice is one button of an approval prompt.
type Choice struct {
	ID    string // sent back in Event.Choice
	Label string
	Typed string // the typed reply that makes the same choice
}

// Option is one answer of a question.
type Option struct {
	Label       string
	Description string
}

// Question is one of AskUserQuestion's questions. Free text ("Other") is
// always possible by replying in the thread.
type Question struct {
	Text    string
	Header  string
	Options []Option
	Multi   bool
}

// PromptState is where a prompt stands; prompts are edited when it changes.
type PromptState int

const (
	PromptPending PromptState = iota
	PromptDecided
	PromptExpired
	PromptCancelled
)

// Prompt is an approval request or a question. ID is opaque: it is all a
// click carries back.
type Prompt struct {
	ID   string
	Kind PromptKind
	// Title: "Bash wants to run", "Claude asks".
	Title string
	// Tool and Detail show what is asked: the exact command, a diff-like view
	// of an edit, whole and as plain text (not Markdown). An adapter shows
	// all of it: what does not fit one message is uploaded whole as a file
	// in the thread before the prompt and its controls are posted (the
	// console prints it in full). A person never decides on a part.
	Tool   string
	Detail string
	// Note is Markdown shown under the detail: what a grant would allow,
	// how to name this prompt when several are open.
	Note string
	// Choices for PromptApproval: a subset of ApprovalChoices, in order.
	Choices []Choice
	// Questions for PromptQuestion.
	Questions []Question

	State PromptState
	// Outcome says who decided what, once State is not pending: "Allowed by
	// @ana", "Denied by @bo: too risky", "Expired".
	Outcome string
}

// Adapter is one chat platform as the bot sees it. Methods are safe for
// concurrent use and may block on platform rate limits until ctx ends.
type Adapter interface {
	// Name is the platform name used in ThreadRef.Platform.
	Name() string
	// Run receives events until ctx ends. An event is acknowledged to the
	// platform only after deliver returns nil.
	Run(ctx context.Context, deliver func(context.Context, Event) error) error
	// Post sends a message into a thread.
	Post(ctx context.Context, t ThreadRef, m Message) (MessageRef, error)
	// Edit replaces a message the bot posted.
	Edit(ctx context.Context, ref MessageRef, m Message) error
	// Ask posts a prompt (buttons, reactions, or text with typed replies).
	Ask(ctx context.Context, t ThreadRef, p Prompt) (MessageRef, error)
	// UpdatePrompt shows a prompt's new state; its controls stop working.
	UpdatePrompt(ctx context.Context, ref MessageRef, p Prompt) error
}

// Pacer is optional: adapters that limit how often a live message may be
// edited declare the interval; the bot coalesces updates to it.
type Pacer interface {
	EditInterval() time.Duration
}

// Statuser is optional: adapters that can show that Claude is working in a
// thread ("is thinking…"). An empty status clears it.
type Statuser interface {
	SetStatus(ctx context.Context, t ThreadRef, status string) error
}

// Opener is optional: adapters that can start a thread by themselves (a
// top-level message in a channel), for scheduled runs.
type Opener interface {
	OpenThread(ctx context.Context, channel string, m Message) (ThreadRef, error)
}

// Teller is optional: adapters that can tell one user something only they
// see (a Slack ephemeral message). Others get a notice in the thread.
type Teller interface {
	Tell(ctx context.Context, t ThreadRef, user User, text string) error
}

// FormatDuration renders a duration for people: 40ms, 3.2s, 2m5s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Cut shortens s to at most n runes, marking a cut with "…".
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// FirstLine is the first line of s, trimmed, with " …" when more follows.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
