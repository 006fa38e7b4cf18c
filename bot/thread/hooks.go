package thread

import (
	"context"
	"encoding/json"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

// The hooks: optional interfaces of an extension's part (Extension.Attach),
// each called on the thread's worker goroutine at the point the package
// doc orders. A part implements those it needs.

// PromptGate is asked before a message goes to Claude. A non-nil error
// refuses it: nothing reaches Claude, and the kernel tells the thread why
// (the error's text) and audits it.
type PromptGate interface {
	BeforePrompt(ctx context.Context, p Prompt) error
}

// Preparer runs before the thread's session starts (attachments are
// fetched, a slot is waited for, claude starts). It may set the thread's
// workspace; an error refuses the start and is told as its reason.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// Launcher runs once the session's slot is taken, right before claude
// starts, and may add to its command line and to the directories its
// runner shows it.
type Launcher interface {
	BeforeLaunch(ctx context.Context, l *Launch)
}

// Launch is a claude process about to start.
type Launch struct {
	// Dir is its working directory; Resume, whether it resumes the
	// thread's conversation.
	Dir    string
	Resume bool
	// ExtraArgs are added to its command line.
	ExtraArgs []string
	// MCPServers and PluginDirs are added to its options
	// (claudeproc.Options): the operator's servers, secrets included,
	// which never go on the command line.
	MCPServers map[string]json.RawMessage
	PluginDirs []string
	// Mounts are directories outside Dir it needs to see (a worktree's
	// git directory); the runner shows them as they say.
	Mounts []claudeproc.Mount
	// Env are variables (NAME=value) its environment gets when the
	// operator's (CLAUDEOPS_CLAUDE_ENV) does not already name them.
	Env []string
	// Image, when set, is the runner's image it runs from in place of
	// the runner's own (claudeproc.Options.Image): a channel's.
	Image string
}

// Instructor gives text for the system prompt of the thread's sessions:
// standing guidance, such as a channel's instructions or the facts it asked
// Claude to remember; "" gives none. The kernel asks before each session
// starts and again before each turn of a live one; it joins the parts'
// texts in the order of bot.Config.Extensions (a blank line between),
// bounds the whole, and sets it apart from its own words. When the text
// changed, a live session between turns is ended and the turn resumes the
// conversation under the new text. The text is for the model to read,
// never a rule: it permits nothing. It must be quick (a read of the
// store at most): it runs before every turn.
type Instructor interface {
	Instructions(ctx context.Context) string
}

// TurnEnder runs when a turn ended with a result, in the order of
// bot.Config.Extensions, all sharing one TurnEnd.
type TurnEnder interface {
	AfterTurn(ctx context.Context, e *TurnEnd)
}

// TurnEnd is a turn that ended with a result. The kernel fills in the
// result, what it cost and used and whether it failed; each hook reads
// what the hooks before it wrote and adds its own.
type TurnEnd struct {
	Result *claudeproc.Result
	// Cost is what the turn cost in US dollars; InputTokens and
	// OutputTokens what it used.
	Cost                      float64
	InputTokens, OutputTokens int64
	// Err is why the turn did not succeed: the result's error, then why
	// a limit stopped it, then a run's failed push. nil: it succeeded.
	Err error
	// Branch is the run's branch, Commit what its push committed, PR the
	// page of the pull request it opened or updated.
	Branch, Commit, PR string
	// Release asks the kernel to stop the session once the hooks ran:
	// its process is freed, and the next message resumes.
	Release bool
}

// Asks is told of the tool calls of the thread that no rule settled.
type Asks interface {
	// BeforeAsk runs before the call is put before people: it may deny
	// it (nobody is asked) or give its prompt a deadline.
	BeforeAsk(ctx context.Context, a *Ask)
	// Asked runs once the prompt is shown.
	Asked(ctx context.Context, a Asked)
	// Expired runs when nobody decided by the prompt's deadline, before
	// the kernel denies it: it may say what Claude and the thread are
	// told.
	Expired(ctx context.Context, e *Expiry)
}

// Ask is a tool call (or a question) about to be put before people.
type Ask struct {
	RequestID string
	Tool      string
	Question  bool
	Input     json.RawMessage
	// Deny, when a hook sets it, denies the call with this message to
	// Claude: no prompt is shown.
	Deny string
	// Deadline, when a hook sets it, is when the prompt expires (zero:
	// the approval timeout).
	Deadline time.Time
}

// Asked is a prompt as shown: its number in the thread, its tool, and when
// it expires.
type Asked struct {
	Num      int
	Tool     string
	Question bool
	Expires  time.Time
}

// Expiry is a prompt nobody decided in time.
type Expiry struct {
	Tool    string
	Expires time.Time
	// Tell is what Claude is told, Outcome what the prompt then says, and
	// Notice, when set, is said in the thread after; a hook may set them.
	Tell, Outcome, Notice string
}

// Exiter runs when the thread's claude process has ended, for reason.
type Exiter interface {
	OnExit(ctx context.Context, reason string)
}

// Ender runs when `new` ended the thread's conversation for good, after
// the thread was told.
type Ender interface {
	OnEnd(ctx context.Context)
}

// Watcher runs after everything the thread's worker handles, with the
// thread's state then.
type Watcher interface {
	Watch(ctx context.Context, s State)
}

// Statuser adds to what `status` and `cost` say.
type Statuser interface {
	Status(ctx context.Context, s *Status)
}

// Status is what `status` or `cost` says, as the hooks add to it.
type Status struct {
	// Cost: `cost` asks (else `status`); Admin: the asker administers the
	// thread's channel (or is a bot admin).
	Cost, Admin bool
	// ThreadSpent is the thread's spend so far; ChannelSpent, for
	// `cost`, the channel's today (UTC). In US dollars.
	ThreadSpent, ChannelSpent float64
	// ThreadNote and ChannelNote are added to the line of each spend.
	ThreadNote, ChannelNote string
	// Spend are lines after the spend; Tail, lines at the end.
	Spend, Tail []string
}

// Receiver takes the messages posted for the thread (Host.PostTo,
// Host.PostChannel, Thread.Post), on its worker, in the order posted. Every
// part is given every message: each takes its own types and ignores the
// rest.
type Receiver interface {
	Receive(ctx context.Context, msg any)
}

// Clicker takes the clicks on the prompts its part showed (Thread.Offer):
// Click reports whether c was on one of them. The kernel has checked that
// the clicker may use the bot; what they may choose is the part's to
// check, and to tell them.
type Clicker interface {
	Click(ctx context.Context, u adapters.User, c adapters.Click) bool
}

// Proposal is a fact Claude proposed with the bot's own tool remember
// (bot/mcptools): untrusted text, of at most store.MaxFactChars
// characters. The call stores nothing.
type Proposal struct{ Text string }

// Proposer takes Claude's Proposals in its thread, on the worker, and puts
// them before people. The kernel offers Claude the tool only in threads
// where a part is a Proposer.
type Proposer interface {
	Propose(ctx context.Context, p Proposal)
}

// Recoverer is an Extension (not a part) that keeps its own record of
// operations a dead run of the bot may have left cut off (a push): Recover
// runs once at start (bot.Recover), before events flow, and tells their
// threads (Host.PostTo), each once.
type Recoverer interface {
	Recover(ctx context.Context)
}

// Sweeper is an Extension (not a part) with periodic work across threads:
// Sweep runs every SweepEvery on the bot's own goroutine, until the bot
// stops.
type Sweeper interface {
	SweepEvery() time.Duration
	Sweep(ctx context.Context)
}
