package adapters

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// Adapter is one chat platform as the bot sees it. Every method is safe for
// concurrent use and no method waits on the platform, Ask excepted: Post,
// Edit and UpdatePrompt (and Statuser's SetStatus) queue the call and
// return, so that a thread's worker goes on reading claude and its mailbox
// whatever the platform does (its round trips, its rate limits, a 429).
// The calls of one thread are made in the order they were asked; what
// queues behind a call the platform holds may collapse to the latest
// content, never lose a final state. Ask waits for its turn in the thread
// and the platform's answer, until ctx ends. adapters/outbox's Mailroom
// keeps this contract for an adapter whose calls wait; an Immediate
// adapter keeps it by never waiting. An error says what was being done
// when it failed (a queued call's failure is the adapter's to log). The bot
// owns policy: an adapter decides nothing about who may do what, and shows
// what it is given without trusting it (text is escaped for its platform,
// links and mentions of untrusted text never become live).
type Adapter interface {
	// Name is the platform name used in ThreadRef.Platform.
	Name() string

	// Run connects and delivers events until ctx ends, then returns nil;
	// it returns an error only when it cannot go on (bad credentials, a
	// connection that will not come back). Contract:
	//   - Events come from people only: the bot's own messages and edits
	//     are never delivered.
	//   - An event is acknowledged to the platform only after deliver
	//     returns nil; when deliver fails the platform may deliver it
	//     again, with the same Incoming.ID (the bot dedupes on it). A
	//     failure is logged at DeliverLevel: not once per event when
	//     its cause was logged once (ErrLoggedOnce).
	//   - A message carries Mentioned when it addressed the bot (a mention,
	//     a DM, a slash command); the bot decides what unaddressed ones mean.
	//   - A click is delivered with the prompt id and choice as clicked,
	//     unchecked: the bot decides whether that person may make it.
	Run(ctx context.Context, deliver func(context.Context, Event) error) error

	// Post sends a message into a thread and returns its ref for Edit,
	// at once: a queued post's ref is provisional (the adapter swaps it
	// for the platform's when the post is made, and an Edit of it is
	// made after the post). Messages posted into one thread appear in the
	// order Post was called. A text too long for one platform message is
	// split, never cut.
	Post(ctx context.Context, t ThreadRef, m Message) (MessageRef, error)

	// Edit replaces a message the bot posted. Edits of a live message may
	// be coalesced and paced by the adapter (only the latest content is
	// shown); an edit with Message.Final set, and any KindTool edit that
	// ends the tool, is urgent: it lands before anything posted after it
	// in the thread, and is never dropped.
	Edit(ctx context.Context, ref MessageRef, m Message) error

	// Ask posts a prompt with controls for exactly p.Choices (or the
	// questions' options) and returns its ref for UpdatePrompt. Whatever
	// of p.Tool and p.Detail does not fit is uploaded whole before the
	// controls appear: a person never decides on a part.
	Ask(ctx context.Context, t ThreadRef, p Prompt) (MessageRef, error)

	// UpdatePrompt shows a prompt's new state and outcome; once it is not
	// pending its controls are removed or stop working.
	UpdatePrompt(ctx context.Context, ref MessageRef, p Prompt) error
}

// Immediate is optional: an adapter whose calls never wait on a remote
// platform (the console writes to a terminal) says so: it keeps no
// mailroom that queues and coalesces, so its transcript shows every edit
// as it was made, and a turn's first text is timed as it is handed over.
type Immediate interface {
	Immediate()
}

// Statuser is optional: adapters that can show that Claude is working in a
// thread ("is thinking…"). An empty status clears it. SetStatus must not
// wait on the platform: it is called on the path from a message to the
// prompt, so it queues the call and returns.
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

// Commander is optional: an adapter that takes some lines itself, before
// the bot sees them (the console's `/thread`). Commands lists them, from
// the same table the adapter parses with, so that `help` in a thread of
// its platform lists every command a person can use there.
type Commander interface {
	Commands() []Command
}

// Command is a command an adapter takes itself: its usage as help shows
// it, and what it does.
type Command struct {
	Usage string
	Help  string
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
