package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// face is the thread's side of the face its extensions' parts see
// (thread.Thread): what the worker lets them ask. Everything but Post runs
// on the worker's goroutine, inside a hook.
type face struct {
	host
	w *worker
}

var _ thread.Thread = (*face)(nil)

func (f *face) Ref() adapters.ThreadRef { return f.w.ref }
func (f *face) Log() *slog.Logger       { return f.w.log }

func (f *face) Link() string {
	if l, ok := f.w.ad.(adapters.Linker); ok {
		return l.ThreadLink(f.w.ref)
	}
	return ""
}

func (f *face) Record() store.Thread {
	w := f.w
	if err := w.loadThread(context.Background(), adapters.User{}); err != nil {
		w.log.Error("load thread", "err", err)
		return store.Thread{Key: string(w.key)}
	}
	return w.thread
}

func (f *face) Run() (thread.Run, bool) {
	if f.w.autoRun == nil {
		return thread.Run{}, false
	}
	return *f.w.autoRun, true
}

func (f *face) State() thread.State            { return f.w.state() }
func (f *face) Dir(ctx context.Context) string { return f.w.cwd(ctx) }

func (f *face) Reply(ctx context.Context, text string)                 { f.w.reply(ctx, text) }
func (f *face) Notice(ctx context.Context, text string, isErr bool)    { f.w.notice(ctx, text, isErr) }
func (f *face) Tell(ctx context.Context, u adapters.User, text string) { f.w.tell(ctx, u, text) }
func (f *face) MayChange(user string) bool                             { return f.w.mayChange(user) }

func (f *face) Audit(ctx context.Context, user, action, target, detail string, allowed bool) {
	f.w.audit(ctx, user, action, target, detail, allowed)
}

func (f *face) RefuseChange(ctx context.Context, u adapters.User, what string) {
	f.w.refuseChange(ctx, u, what)
}

func (f *face) Notify(ctx context.Context, u adapters.User, text string) error {
	n, ok := f.w.ad.(adapters.Notifier)
	if !ok {
		return thread.ErrNoNotifier
	}
	_, err := n.Notify(ctx, f.w.ref, u, text)
	return err
}

// PostFile posts after what the thread was shown before (the adapter's
// mailroom keeps the order).
func (f *face) PostFile(ctx context.Context, file adapters.OutFile) error {
	w := f.w
	fp, ok := w.ad.(adapters.FilePoster)
	if !ok {
		return fmt.Errorf("%s cannot post files", w.ref.Platform)
	}
	if limit := fp.MaxFileBytes(ctx); int64(len(file.Data)) > limit {
		return fmt.Errorf("%s is %d bytes, over %s's limit of %d", file.Name, len(file.Data), w.ref.Platform, limit)
	}
	_, err := fp.PostFile(ctx, w.ref, file)
	return err
}

func (f *face) Offer(ctx context.Context, p adapters.Prompt) (adapters.MessageRef, error) {
	return f.w.ad.Ask(ctx, f.w.ref, p)
}

func (f *face) UpdateOffer(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error {
	return f.w.ad.UpdatePrompt(ctx, ref, p)
}

func (f *face) Interrupt(ctx context.Context) error {
	if !f.w.sess.live() {
		return errNoProcess
	}
	_, err := f.w.sess.proc.Interrupt(ctx, true)
	return err
}

func (f *face) CancelPrompts(ctx context.Context, why string) { f.w.cancelPrompts(ctx, why) }
func (f *face) Stop(why string)                               { f.w.stop(why) }
func (f *face) Post(msg any) bool                             { return f.w.posted.put(msg) }
func (f *face) Settle(ctx context.Context, ev adapters.Event) { f.w.records.settle(ctx, keyOf(ev)) }
func (f *face) RemoveHome(ctx context.Context)                { f.w.removeHome(ctx) }
func (f *face) EndRun()                                       { f.w.autoRun = nil }

func (f *face) SetWorkspace(ctx context.Context, ws thread.Workspace) {
	if err := f.w.loadThread(ctx, adapters.User{}); err != nil {
		f.w.log.Error("load thread", "err", err)
		return
	}
	t := &f.w.thread
	if ws.Path != "" && ws.Path != t.Worktree {
		// The CLI keeps a conversation by directory: it cannot resume in
		// another.
		t.SessionID = ""
	}
	t.Repo, t.Worktree, t.Branch, t.BaseCommit = ws.Repo, ws.Path, ws.Branch, ws.Base
	f.w.saveThread(ctx)
}

func (f *face) BeginRun(ctx context.Context, r thread.Run, p thread.Prompt) error {
	w := f.w
	if err := w.loadThread(ctx, adapters.User{ID: r.Schedule.CreatedBy}); err != nil {
		return fmt.Errorf("load thread: %w", err)
	}
	w.thread.Model, w.thread.Cwd = r.Schedule.Model, r.Schedule.Cwd
	w.saveThread(ctx)
	header := triggerHeader(r.Trigger)
	if r.Trigger == "" {
		// Where the run is, for the start that settles it should the bot
		// stop before the run's end is recorded (its cost is its thread's
		// turn).
		if err := w.store.SetRunThread(ctx, r.Schedule.ID, r.Slot, string(w.key)); err != nil {
			w.log.Warn("record the thread of a scheduled run", "schedule", r.Schedule.ID, "err", err)
		}
		header = scheduleHeader(r.Schedule.ID, r.Schedule.CreatedBy)
	}
	w.autoRun = &r
	var refused *thread.Refused
	if err := w.prompt(ctx, promptIn{Prompt: p, header: header}); errors.As(err, &refused) {
		return err
	} else if err != nil {
		return errNotSent
	}
	return nil
}

func (f *face) Send(ctx context.Context, p thread.Prompt) error {
	return f.w.prompt(ctx, promptIn{Prompt: p, at: f.w.arrived})
}

// errNotSent: a run's prompt could not be sent (the thread was told why).
var errNotSent = errors.New("the prompt could not be sent to Claude")

// posted is what a thread's parts posted for themselves (thread.Thread.Post):
// unbounded, so that a part's timer never waits on a busy thread, and
// closed when the worker goes.
type posted struct {
	mu    sync.Mutex
	msgs  []any
	gone  bool
	ready chan struct{} // signalled when msgs is no longer empty
}

func newPosted() *posted { return &posted{ready: make(chan struct{}, 1)} }

func (p *posted) put(m any) bool {
	p.mu.Lock()
	if p.gone {
		p.mu.Unlock()
		return false
	}
	p.msgs = append(p.msgs, m)
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
	return true
}

func (p *posted) take() []any {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.msgs
	p.msgs = nil
	return m
}

func (p *posted) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone, p.msgs = true, nil
}
