package thread

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// Extension is a feature of threads. cmd builds it and lists it in
// bot.Config.Extensions.
type Extension interface {
	// Name names the extension in logs; unique among the bot's.
	Name() string
	// Init is called once, by bot.New, before any thread runs: h is the
	// bot's side of the face for the extension's whole life.
	Init(h Host)
	// Attach is called on a thread's worker goroutine as it starts: the
	// value returned is the extension's part in that thread (nil: none),
	// whose hooks the kernel calls. It must not block.
	Attach(t Thread) any
}

// Host is what an extension may ask of the bot as a whole. Every method is
// safe from any goroutine.
type Host interface {
	Now() time.Time
	Log() *slog.Logger
	// Store reads the bot's records.
	Store() Reader
	Settings() Settings
	// IsAdmin: user is one of the bot's admins, admins everywhere. A
	// channel's own admins (its admins setting) are asked of Scopes:
	// Scopes().IsAdmin(Where(t.Ref()), user); Thread.MayChange counts them.
	IsAdmin(user string) bool
	// Scopes says which setting applies where and who administers a
	// channel (package settings); ask it with Where.
	Scopes() *settings.Resolver
	// PostTo queues msg for the parts of thread key (Receiver), starting
	// its worker if it has none; false when its mailbox is full or the
	// bot is closing.
	PostTo(key adapters.ThreadKey, msg any) bool
	// PostChannel queues msg for the parts of the threads of a channel
	// that have a worker now, but except.
	PostChannel(channel string, except adapters.ThreadKey, msg any)
	// OpenThread starts a thread in a channel of platform with head as
	// its first message; ErrNoOpener when the platform cannot.
	OpenThread(ctx context.Context, platform, channel string, head adapters.Message) (adapters.ThreadRef, error)
}

// ErrNoOpener: the platform cannot start a thread by itself.
var ErrNoOpener = errors.New("the target platform cannot open a thread")

// ErrNoNotifier: the platform has no live mention (Thread.Notify).
var ErrNoNotifier = errors.New("the platform cannot notify a user")

// Thread is what an extension's part may ask of its thread. Its methods are
// for the thread's worker goroutine (a hook), but Post, which any
// goroutine may call.
type Thread interface {
	Host
	Ref() adapters.ThreadRef
	// Link is a page where people open the thread (its permalink on the
	// platform), "" where the platform has none (the console).
	Link() string
	// Log is the thread's logger: its lines name the thread and the
	// running turn.
	Log() *slog.Logger
	// Record is a copy of the thread's record, read from the store the
	// first time (a thread not stored yet has no starter).
	Record() store.Thread
	// Run is the unattended run the thread is doing, if any (BeginRun).
	Run() (Run, bool)
	// State is the thread's state now.
	State() State
	// Dir is the session's working directory: the thread's worktree,
	// else the channel's directory, else the bot's default.
	Dir(ctx context.Context) string

	// Reply says text in the thread; Notice says it as an error when
	// isErr; Tell says it to one user, privately where the platform can.
	Reply(ctx context.Context, text string)
	Notice(ctx context.Context, text string, isErr bool)
	Tell(ctx context.Context, u adapters.User, text string)
	// Notify says text in the thread so that u is notified (a live
	// mention); an error when the platform cannot.
	Notify(ctx context.Context, u adapters.User, text string) error
	// PostFile posts f in the thread, after what the thread was shown.
	PostFile(ctx context.Context, f adapters.OutFile) error
	// Offer shows p, a prompt of the part's own (its ID the part's, unlike
	// any approval's), with the platform's controls for its choices: a
	// click on it goes to the part's Clicker, never to the approvals.
	// UpdateOffer shows its new state.
	Offer(ctx context.Context, p adapters.Prompt) (adapters.MessageRef, error)
	UpdateOffer(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error
	// Audit records what user did, or was refused, in the thread.
	Audit(ctx context.Context, user, action, target, detail string, allowed bool)
	// MayChange: user is the thread's starter, an admin of its channel or
	// a bot admin; RefuseChange
	// tells user that what they tried is theirs, and audits it.
	MayChange(user string) bool
	RefuseChange(ctx context.Context, u adapters.User, what string)

	// Interrupt interrupts the running turn (queued messages dropped),
	// bounded by ctx; open prompts stay for CancelPrompts or the CLI.
	Interrupt(ctx context.Context) error
	// CancelPrompts closes the thread's open prompts, saying why.
	CancelPrompts(ctx context.Context, why string)
	// Stop ends the thread's claude process (if any), expiring its
	// prompts; why, when set, is told.
	Stop(why string)
	// Settle tells the kernel that what becomes of ev, the chat message
	// being handled (a command), is the part's to tell from here on: a
	// restart will not tell it as a message not run. For an operation
	// the part records itself and tells at the next start should the bot
	// die meanwhile (a push: Recoverer).
	Settle(ctx context.Context, ev adapters.Event)
	// Post queues msg for the thread's parts (Receiver), after what is
	// posted already; it never blocks, and reports false once the
	// thread's worker is gone. For a part's own timers and follow-ups.
	Post(msg any) bool

	// SetWorkspace makes ws the thread's workspace (Path "": removed). A
	// conversation belongs to the directory it ran in: a new worktree
	// starts a fresh one.
	SetWorkspace(ctx context.Context, ws Workspace)
	// RemoveHome removes what the CLI kept of the thread's conversation,
	// which cannot be resumed any more (its directory is gone); nothing
	// while a process runs.
	RemoveHome(ctx context.Context)
	// BeginRun makes the thread do r: its record takes r's model and
	// directory (a new thread's starter is r's creator), and p goes to
	// Claude, its first line naming r's schedule. An error says why it
	// did not (a *Refused when a PromptGate refused it). The run lasts
	// until EndRun.
	BeginRun(ctx context.Context, r Run, p Prompt) error
	EndRun()
	// Send sends p to Claude as p.User's message in the thread, as if
	// they had written p.Text: their sender line first, the PromptGates
	// asked, the session started or resumed (its conversation kept). It
	// returns nil once Claude has it, else why not (the thread was told).
	// For a command that hands Claude text on its sender's behalf
	// (`review`): the sender decided it, so it is theirs, never Auto.
	Send(ctx context.Context, p Prompt) error
}

// Reader is the store's queries an extension may make; *store.Store is it.
type Reader interface {
	GetChannel(ctx context.Context, key string) (store.Channel, bool, error)
	IdleWorktrees(ctx context.Context, idleBefore time.Time) ([]store.Thread, error)
	ThreadUsage(ctx context.Context, threadKey string) (store.Usage, error)
	// ThreadTurns is the thread's turns, oldest first.
	ThreadTurns(ctx context.Context, threadKey string) ([]store.Turn, error)
	ChannelUsageSince(ctx context.Context, channelKey string, since time.Time) (store.Usage, error)
	GetSchedule(ctx context.Context, id int64) (store.Schedule, bool, error)
	ListSchedules(ctx context.Context) ([]store.Schedule, error)
	Runs(ctx context.Context, scheduleID int64, limit int) ([]store.ScheduleRun, error)
}

// Settings are the bot's settings extensions rely on.
type Settings struct {
	// Workdir is the default working directory, absolute.
	Workdir string
	// ApprovalTimeout is how long a prompt waits for a person.
	ApprovalTimeout time.Duration
	// StopGrace bounds each step of stopping a claude process.
	StopGrace time.Duration
}

// State is a thread's state at one moment.
type State struct {
	// Live: a claude process runs for the thread.
	Live bool
	// Turn numbers the running turn within the worker's life (0: none).
	Turn int
	// Queued counts messages sent while a turn ran, not taken up yet.
	Queued int
	// Tools: tool lines are shown running or waiting for a decision.
	Tools bool
	// Prompts counts the prompts waiting for a person.
	Prompts int
	// Inputs counts what waits in the thread's mailbox.
	Inputs int
}

// Busy: a turn runs, messages wait for Claude, tools run or prompts wait.
func (s State) Busy() bool { return s.Turn != 0 || s.Queued > 0 || s.Tools || s.Prompts > 0 }

// Quiet: not busy, and nothing waits in the mailbox.
func (s State) Quiet() bool { return !s.Busy() && s.Inputs == 0 }

// Run is an unattended run of a stored prompt (a scheduled run), or of
// an event (a trigger's run), as the extension that began it describes it
// to the others.
type Run struct {
	Schedule store.Schedule
	Slot     time.Time
	// Trigger names the trigger whose event started the run ("" for a
	// scheduled run). Its Schedule is then not stored (ID 0) and holds
	// the run's channel, prompt and starter ("trigger:<name>", nobody in
	// the chat) only.
	Trigger string
}

// Workspace is a thread's git worktree: the repository, the worktree's
// path, its branch and the commit the branch started from.
type Workspace struct {
	Repo, Path, Branch, Base string
}

// Prompt is a message on its way to Claude.
type Prompt struct {
	// Text is what was written, without the line the bot puts first.
	Text string
	// User sent it; for a run's prompt, the user the run is for.
	User adapters.User
	// Auto names who sends an unattended prompt ("scheduler"): audits
	// name it as the actor; "" for a person's message.
	Auto string
}

// Refused is why a PromptGate refused a prompt.
type Refused struct{ Why string }

func (r *Refused) Error() string { return r.Why }

// Where is the place of thread t, as package settings names it.
func Where(t adapters.ThreadRef) settings.Where {
	return settings.Where{Platform: t.Platform, Channel: t.Channel, Thread: t.Thread}
}
