package scheduled

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// Config configures the extension.
type Config struct {
	// MaxPerUser caps the schedules one user (not an admin) created; 0
	// takes the default (10), negative means no cap. (The variable's 0
	// means no cap: cmd makes it negative.)
	MaxPerUser int `env:"CLAUDEOPS_MAX_SCHEDULES_PER_USER" envDefault:"10"`
	// Repos says which repository a channel is bound to, and whether it
	// has a forge (the workspaces extension, connected by cmd): a
	// schedule's --push needs the one, --pr both. nil: none is.
	Repos Repos `env:"-"`
	// Triggers are what `triggers` shows (cmd connects them). nil: none.
	Triggers Triggers `env:"-"`
}

// Repos says which repository a channel is bound to ("" for none), and
// whether the operator configured a forge for a repository.
type Repos interface {
	Repo(ctx context.Context, channel string) string
	HasForge(repo string) bool
}

// Scheduling is what the schedule commands need of the scheduler:
// *scheduler.Scheduler satisfies it, and cmd passes it in (SetScheduler;
// this package does not import scheduler: the scheduler calls the bot).
type Scheduling interface {
	// Add validates and stores a schedule and starts running it; it
	// returns the stored schedule.
	Add(ctx context.Context, s store.Schedule) (store.Schedule, error)
	SetPaused(ctx context.Context, id int64, paused bool) error
	Remove(ctx context.Context, id int64) error
	RunNow(ctx context.Context, id int64) (time.Time, error)
	// Next returns a schedule's next n run times.
	Next(s store.Schedule, n int) ([]time.Time, error)
}

// Extension is the schedules extension: one per bot.
type Extension struct {
	cfg  Config
	host thread.Host

	mu    sync.Mutex
	sched Scheduling
	// adding serializes the per-user schedule count and the add, so that
	// concurrent adds cannot pass the cap together.
	adding sync.Mutex
}

var _ thread.Commander = (*Extension)(nil)

// New makes the extension.
func New(cfg Config) *Extension {
	if cfg.MaxPerUser == 0 {
		cfg.MaxPerUser = 10
	}
	return &Extension{cfg: cfg}
}

func (e *Extension) Name() string       { return "schedules" }
func (e *Extension) Init(h thread.Host) { e.host = h }

// Attach makes the extension's part in thread t.
func (e *Extension) Attach(t thread.Thread) any { return &part{ext: e, t: t} }

// SetScheduler connects the schedule commands to the scheduler.
func (e *Extension) SetScheduler(s Scheduling) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sched = s
}

func (e *Extension) scheduling() Scheduling {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sched
}

// run is an unattended run on its way through a thread: what it is (a
// schedule's slot, or a trigger's event), and where the thread's part
// reports the end of the run's turn.
type run struct {
	what   thread.Run
	prompt thread.Prompt
	// deadline is when the run's time is up (zero: no deadline); a parked
	// request is denied by then at the latest.
	deadline time.Time
	done     chan outcome
}

type outcome struct {
	res store.ScheduleRun
	err error
}

// startRun and stopRun are posted to the run's thread: begin the run; its
// time is up.
type (
	startRun struct{ run *run }
	stopRun  struct{}
)

// RunScheduled runs one scheduled prompt: it opens a thread in the target
// channel, runs the prompt in a fresh session there (unattended approvals
// follow the schedule's policy), and returns when the turn ends or ctx does
// (the turn is then stopped). People can reply in the thread afterwards.
// Of the run it fills in what the bot knows (session, thread, result,
// cost, tokens, turns, branch, commit): it is the scheduler's Runner.
func (e *Extension) RunScheduled(ctx context.Context, s store.Schedule, slot time.Time) (store.ScheduleRun, error) {
	head := fmt.Sprintf("⏰ Scheduled run of #%d (`%s`, slot %s): %s", s.ID, s.Spec, slot.UTC().Format(time.RFC3339), s.Prompt)
	r := &run{
		what:   thread.Run{Schedule: s, Slot: slot},
		prompt: thread.Prompt{Text: s.Prompt, User: adapters.User{ID: s.CreatedBy}, Auto: "scheduler"},
	}
	return e.runIn(ctx, fmt.Sprintf("schedule %d", s.ID), adapters.Message{Kind: adapters.KindNotice, Text: head}, r)
}

// Triggered is an event's run (package triggers, connected by cmd): where,
// the thread's first message, and Claude's prompt.
type Triggered struct {
	Trigger           string
	Platform, Channel string
	Head, Prompt      string
}

// RunTriggered runs a trigger's event as a scheduled run is run (a new
// thread in its channel, the channel's settings at run time, the
// unattended policy: nobody is asked), on behalf of "trigger:<name>",
// nobody in the chat, so that the event's sender decides no approval.
func (e *Extension) RunTriggered(ctx context.Context, t Triggered) (store.ScheduleRun, error) {
	by := "trigger:" + t.Trigger
	r := &run{
		what:   thread.Run{Trigger: t.Trigger, Schedule: store.Schedule{Platform: t.Platform, Channel: t.Channel, Prompt: t.Prompt, CreatedBy: by}},
		prompt: thread.Prompt{Text: t.Prompt, User: adapters.User{ID: by}, Auto: "trigger"},
	}
	return e.runIn(ctx, "trigger "+t.Trigger, adapters.Message{Kind: adapters.KindNotice, Text: t.Head}, r)
}

// runIn opens a thread in r's channel with head, posts r to it, and waits
// for the end of its turn or of ctx (the turn is then stopped); what names
// the run in its errors.
func (e *Extension) runIn(ctx context.Context, what string, head adapters.Message, r *run) (store.ScheduleRun, error) {
	s := r.what.Schedule
	ref, err := e.host.OpenThread(ctx, s.Platform, s.Channel, head)
	if err != nil {
		if errors.Is(err, thread.ErrNoOpener) {
			return store.ScheduleRun{}, fmt.Errorf("%s: %w (%s)", what, err, s.Platform)
		}
		return store.ScheduleRun{}, fmt.Errorf("%s: open thread: %w", what, err)
	}
	key := ref.Key()
	r.done = make(chan outcome, 1)
	r.deadline, _ = ctx.Deadline()
	if !e.host.PostTo(key, startRun{r}) {
		return store.ScheduleRun{ThreadKey: string(key)}, fmt.Errorf("%s: the bot is busy or shutting down", what)
	}
	select {
	case out := <-r.done:
		out.res.ThreadKey = string(key)
		return out.res, out.err
	case <-ctx.Done():
		e.host.PostTo(key, stopRun{})
		return store.ScheduleRun{ThreadKey: string(key)}, ctx.Err()
	}
}
