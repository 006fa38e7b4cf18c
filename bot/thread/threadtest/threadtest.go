package threadtest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// Thread is a fake thread.Thread. Set its fields before the part runs;
// read what it recorded after. Post and the Host's methods are safe from
// any goroutine (read what they recorded with TakeSent and Opened); the
// rest is for the test's goroutine.
type Thread struct {
	Key adapters.ThreadRef
	// Permalink is what Link answers.
	Permalink string
	Rec       store.Thread
	Doing     *thread.Run // Run's answer; BeginRun sets it
	Clock     func() time.Time
	WorkDir   string
	Current   thread.State
	Records   *Store
	Config    thread.Settings
	Admins    []string
	// Resolver is what Scopes answers (nil: one with Admins as the bot's
	// admins and nothing set).
	Resolver *settings.Resolver
	// InterruptErr is what Interrupt returns; PromptErr what BeginRun
	// and Send do.
	InterruptErr, PromptErr error

	// What the part did.
	Said       []string // replies, notices ("!" first when an error), tells ("@user "), notifications
	Files      []adapters.OutFile
	Offers     []adapters.Prompt // Offer and UpdateOffer, in order
	Audits     []string          // "user action target detail allowed"
	Interrupts int
	Cancelled  []string
	Stops      []string
	Homes      int      // RemoveHome calls
	Settled    []string // Settle calls: the events' ids
	Workspaces []thread.Workspace
	Prompts    []thread.Prompt
	// OpenRef is the thread OpenThread opens (none: ErrNoOpener).
	OpenRef adapters.ThreadRef

	mu     sync.Mutex
	posted []any
	sent   []any    // PostTo and PostChannel
	opened []string // OpenThread: "platform/channel: head"
}

var _ thread.Thread = (*Thread)(nil)

// New is a fake thread of console/console/<name> started by starter, with
// an empty store and a stop grace of a second.
func New(name, starter string) *Thread {
	ref := adapters.ThreadRef{Platform: "console", Channel: "console", Thread: name}
	return &Thread{
		Key:     ref,
		Rec:     store.Thread{Key: string(ref.Key()), Platform: ref.Platform, Channel: ref.Channel, ThreadID: name, StartedBy: starter},
		WorkDir: "/work",
		Records: &Store{},
		Config:  thread.Settings{Workdir: "/work", ApprovalTimeout: 15 * time.Minute, StopGrace: time.Second},
	}
}

// Step plays one turn of the worker's loop: the messages posted so far go
// to every part's Receive, in order, then every part is told the state
// (Watch), as the kernel does after everything it handles.
func (t *Thread) Step(ctx context.Context, parts ...any) {
	t.mu.Lock()
	msgs := t.posted
	t.posted = nil
	t.mu.Unlock()
	for _, m := range msgs {
		for _, p := range parts {
			if r, ok := p.(thread.Receiver); ok {
				r.Receive(ctx, m)
			}
		}
	}
	for _, p := range parts {
		if w, ok := p.(thread.Watcher); ok {
			w.Watch(ctx, t.Current)
		}
	}
}

func (t *Thread) Now() time.Time {
	if t.Clock != nil {
		return t.Clock()
	}
	return time.Now()
}

func (t *Thread) Log() *slog.Logger         { return slog.New(slog.DiscardHandler) }
func (t *Thread) Store() thread.Reader      { return t.Records }
func (t *Thread) Settings() thread.Settings { return t.Config }
func (t *Thread) IsAdmin(user string) bool  { return slices.Contains(t.Admins, user) }
func (t *Thread) Scopes() *settings.Resolver {
	if t.Resolver == nil {
		t.Resolver = settings.New(settings.Layer{}, t.Admins)
	}
	return t.Resolver
}
func (t *Thread) Ref() adapters.ThreadRef    { return t.Key }
func (t *Thread) Link() string               { return t.Permalink }
func (t *Thread) Record() store.Thread       { return t.Rec }
func (t *Thread) State() thread.State        { return t.Current }
func (t *Thread) Dir(context.Context) string { return t.WorkDir }

func (t *Thread) Run() (thread.Run, bool) {
	if t.Doing == nil {
		return thread.Run{}, false
	}
	return *t.Doing, true
}

// TakeSent is what was posted to threads (PostTo, PostChannel) since the
// last TakeSent, in order.
func (t *Thread) TakeSent() []any {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sent
	t.sent = nil
	return s
}

// Opened are the threads OpenThread was asked for: "platform/channel: head".
func (t *Thread) Opened() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.opened...)
}

func (t *Thread) PostTo(_ adapters.ThreadKey, msg any) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent = append(t.sent, msg)
	return true
}

func (t *Thread) PostChannel(_ string, _ adapters.ThreadKey, msg any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent = append(t.sent, msg)
}

func (t *Thread) OpenThread(_ context.Context, platform, channel string, head adapters.Message) (adapters.ThreadRef, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.opened = append(t.opened, platform+"/"+channel+": "+head.Text)
	if t.OpenRef.Platform == "" {
		return adapters.ThreadRef{}, thread.ErrNoOpener
	}
	return t.OpenRef, nil
}

func (t *Thread) Reply(_ context.Context, text string) { t.Said = append(t.Said, text) }

func (t *Thread) Notice(_ context.Context, text string, isErr bool) {
	if isErr {
		text = "!" + text
	}
	t.Said = append(t.Said, text)
}

func (t *Thread) Tell(_ context.Context, u adapters.User, text string) {
	t.Said = append(t.Said, "@"+u.ID+" "+text)
}

func (t *Thread) Notify(_ context.Context, u adapters.User, text string) error {
	t.Said = append(t.Said, "notify @"+u.ID+" "+text)
	return nil
}

func (t *Thread) PostFile(_ context.Context, f adapters.OutFile) error {
	t.Files = append(t.Files, f)
	return nil
}

func (t *Thread) Offer(_ context.Context, p adapters.Prompt) (adapters.MessageRef, error) {
	t.Offers = append(t.Offers, p)
	return adapters.MessageRef{Thread: t.Key, ID: fmt.Sprintf("offer-%d", len(t.Offers))}, nil
}

func (t *Thread) UpdateOffer(_ context.Context, _ adapters.MessageRef, p adapters.Prompt) error {
	t.Offers = append(t.Offers, p)
	return nil
}

func (t *Thread) Audit(_ context.Context, user, action, target, detail string, allowed bool) {
	t.Audits = append(t.Audits, fmt.Sprintf("%s %s %s %s %v", user, action, target, detail, allowed))
}

func (t *Thread) MayChange(user string) bool {
	return user == t.Rec.StartedBy || t.IsAdmin(user) || t.Scopes().IsAdmin(thread.Where(t.Ref()), user)
}

func (t *Thread) RefuseChange(_ context.Context, u adapters.User, what string) {
	t.Said = append(t.Said, "@"+u.ID+" refused: "+what)
}

func (t *Thread) Interrupt(context.Context) error {
	t.Interrupts++
	return t.InterruptErr
}

func (t *Thread) CancelPrompts(_ context.Context, why string) { t.Cancelled = append(t.Cancelled, why) }

// Stop records why, and the process is gone: no process, no turn.
func (t *Thread) Stop(why string) {
	t.Stops = append(t.Stops, why)
	t.Current.Live, t.Current.Turn = false, 0
}

func (t *Thread) Post(msg any) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.posted = append(t.posted, msg)
	return true
}

func (t *Thread) SetWorkspace(_ context.Context, ws thread.Workspace) {
	if ws.Path != "" && ws.Path != t.Rec.Worktree {
		t.Rec.SessionID = ""
	}
	t.Rec.Repo, t.Rec.Worktree, t.Rec.Branch, t.Rec.BaseCommit = ws.Repo, ws.Path, ws.Branch, ws.Base
	t.Workspaces = append(t.Workspaces, ws)
}

func (t *Thread) RemoveHome(context.Context) { t.Homes++ }

func (t *Thread) Settle(_ context.Context, ev adapters.Event) { t.Settled = append(t.Settled, ev.ID()) }

func (t *Thread) BeginRun(_ context.Context, r thread.Run, p thread.Prompt) error {
	t.Rec.Model, t.Rec.Cwd = r.Schedule.Model, r.Schedule.Cwd
	t.Doing = &r
	t.Prompts = append(t.Prompts, p)
	return t.PromptErr
}

func (t *Thread) EndRun() { t.Doing = nil }

// Send records p with the prompts (BeginRun's too) and returns PromptErr.
func (t *Thread) Send(_ context.Context, p thread.Prompt) error {
	t.Prompts = append(t.Prompts, p)
	return t.PromptErr
}
