package adapters

import (
	"context"
	"io"
)

// Event is what an adapter delivers to the bot: who, where, and exactly one
// of the message posted or the click made. (A scheduled run reaches the
// bot as an Event with neither: no person sent it.)
type Event struct {
	Thread ThreadRef
	User   User
	// Message is set for a message posted in the thread.
	Message *Incoming
	// Click is set for a click on one of the bot's prompts or controls.
	Click *Click
	// Unverified, when set, says why the platform cannot vouch that the
	// event comes from its sender as the room requires (Matrix: sent in
	// clear in an end-to-end encrypted room, or from a session its sender
	// has not verified). Such an event may be talk, but it decides nothing
	// and runs no command.
	Unverified string
}

// User is who sent an event, as the platform identifies them. ID is the
// immutable id decisions are checked against and rules name; Name is what
// the platform calls them, for display only (Claude sees it beside the id).
type User struct {
	ID   string
	Name string
}

// Incoming is a message posted in a thread.
type Incoming struct {
	// ID is the message's identity on its platform, the dedupe key: Slack
	// team/channel/ts, a Matrix event id. Two deliveries of the same post
	// carry the same ID.
	ID string
	// Text of the message, without the mention of the bot.
	Text string
	// Mentioned is true when the message addressed the bot (a mention, a
	// DM, a slash command, the console).
	Mentioned bool
	Files     []File
	// OpenThread is set when the thread does not exist yet (a Slack
	// `/claude` command): Thread names only the channel, and nothing has
	// been posted. The bot calls it once it has accepted the sender, and
	// the thread it returns is the event's; a sender it refuses is told
	// with Thread as it is (privately: the adapter's Teller), so nothing
	// reaches the channel.
	OpenThread func(context.Context) (ThreadRef, error)
}

// Click is a choice made with a prompt's controls (a button, a reaction, a
// poll vote) or a turn's Stop control. Everything in it is as the platform
// delivered it: untrusted until the bot checks it against the prompt.
type Click struct {
	// ID is the click's identity when the platform makes it an event of
	// its own (a Matrix reaction or poll vote), deduped like a message so
	// that a replayed sync acts once; empty where it is not (a Slack
	// button: Slack does not redeliver an acknowledged click).
	ID string
	// PromptID is the prompt clicked (empty for ChoiceStop).
	PromptID string
	Choice   ChoiceID
	// Answers, for ChoiceAnswer: one entry per question, the chosen option
	// numbers (1-based, comma-separated), "" where that question was left
	// unanswered.
	Answers []string
	// Reason comes with ChoiceDeny.
	Reason string
}

// ChoiceID is what a click chose.
type ChoiceID string

// The choices a click can carry.
const (
	ChoiceAllow       ChoiceID = "allow"        // this request once
	ChoiceAllowThread ChoiceID = "allow_thread" // the same call for the rest of the thread (a file write: that file)
	ChoiceAllowFolder ChoiceID = "allow_folder" // a file write: its folder, for the rest of the thread
	ChoiceAllowAlways ChoiceID = "allow_always" // a channel rule; offered to admins only
	ChoiceDeny        ChoiceID = "deny"         // with an optional reason
	ChoiceAnswer      ChoiceID = "answer"       // a question answered with its controls
	ChoiceStop        ChoiceID = "stop"         // the Stop control of a running turn
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

// ID is the identity the bot dedupes the event on: the message's, or the
// click's where it is an event of its own; "" otherwise.
func (e Event) ID() string {
	switch {
	case e.Message != nil:
		return e.Message.ID
	case e.Click != nil:
		return e.Click.ID
	}
	return ""
}
