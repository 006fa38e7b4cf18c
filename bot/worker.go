package bot

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

type inputKind int

const (
	inEvent     inputKind = iota // a chat event for this thread
	inExpired                    // an approval of this thread expired
	inEvict                      // give the process slot back
	inScheduled                  // start a scheduled run in this thread
	inStopRun                    // a scheduled run's time is up
	inRules                      // the channel's deny rules changed
)

type input struct {
	kind    inputKind
	ev      adapters.Event
	pending approvals.Pending
	run     *scheduledRun
}

// workerLinger is how long a worker with no process and nothing to do stays
// before it exits (the thread itself lives on in the store).
const workerLinger = time.Minute

// worker owns one thread: its claude process, its turn rendering and its
// prompts. Everything about the thread happens on the worker's goroutine, in
// arrival order, so its state needs no locks.
type worker struct {
	b       *Bot
	ref     adapters.ThreadRef
	key     adapters.ThreadKey
	log     *slog.Logger
	ad      adapters.Adapter
	mailbox chan *input
	// life ends when the bot shuts down: waits (for a session slot) and
	// starting claude use it; handling what arrived does not (see run).
	life context.Context
	// pendingInputs counts inputs queued or being queued, so the bot never
	// retires a worker that has work coming.
	pendingInputs atomic.Int64
	idle          atomic.Bool

	thread store.Thread
	loaded bool

	proc    process
	events  <-chan claudeproc.Event
	started bool          // this process printed system/init at least once
	initial *queuedPrompt // first prompt of a resumed process, resent if the resume fails

	turn *turn
	// schedRun is the scheduled run this thread is doing, if any.
	schedRun *scheduledRun
	tools    map[string]*toolLine // by tool_use id, while shown running
	// toolInputs keeps what each running tool call asked, by tool_use id:
	// some approval requests (ExitPlanMode) carry an empty input.
	toolInputs map[string]json.RawMessage
	queued     map[string]*queuedPrompt // by uuid: sent while a turn ran
	prompts    map[string]*promptState  // by approval id
	promptSeq  int                      // numbers the thread's prompts: #1, #2…

	flushTimer *time.Timer
	flushC     <-chan time.Time
	tickC      <-chan time.Time
	ticker     *time.Ticker
	idleTimer  *time.Timer
}

type queuedPrompt struct {
	msg    claudeproc.UserMessage
	text   string
	user   adapters.User
	notice adapters.MessageRef
	shown  bool
}

func newWorker(b *Bot, ref adapters.ThreadRef) *worker {
	w := &worker{
		b:          b,
		ref:        ref,
		key:        ref.Key(),
		log:        b.log.With("thread", ref.Key()),
		ad:         b.adapter(ref.Platform),
		mailbox:    make(chan *input, b.cfg.MailboxSize),
		life:       b.runCtx,
		queued:     make(map[string]*queuedPrompt),
		tools:      make(map[string]*toolLine),
		toolInputs: make(map[string]json.RawMessage),
		prompts:    make(map[string]*promptState),
	}
	w.idle.Store(true)
	return w
}

// isIdle: no turn running and nothing queued (pending approvals alone do not
// count: nobody may be there to answer them).
func (w *worker) isIdle() bool { return w.idle.Load() && w.pendingInputs.Load() == 0 }

func (w *worker) updateIdle() {
	busy := w.turn != nil || len(w.queued) > 0 || len(w.tools) > 0
	w.idle.Store(!busy)
	w.b.slots.setBusy(string(w.key), busy || w.hasPendingPrompts())
	if !busy {
		w.b.signalIdle()
	}
}

func (w *worker) hasPendingPrompts() bool {
	for _, p := range w.prompts {
		if p.open {
			return true
		}
	}
	return false
}

func (w *worker) run(ctx context.Context) {
	w.idleTimer = time.NewTimer(workerLinger)
	defer w.idleTimer.Stop()
	// ctx ending means: stop. What is being handled when it ends (a result,
	// its footer, the thread's record) still completes; the adapters and
	// the store bound each call by their own timeouts.
	w.life = ctx
	work := context.WithoutCancel(ctx)
	for {
		var idleC <-chan time.Time
		if w.quiet() {
			idleC = w.idleTimer.C
		}
		if ctx.Err() != nil {
			w.stop("the bot is shutting down")
			return
		}
		select {
		case <-ctx.Done():
			w.stop("the bot is shutting down")
			return
		case in := <-w.mailbox:
			w.pendingInputs.Add(-1)
			w.handleInput(work, in)
		case ev, ok := <-w.events:
			if !ok {
				w.events = nil
				continue
			}
			w.handleProc(work, ev)
		case <-w.flushC:
			w.flushC, w.flushTimer = nil, nil
			w.flush(work, false)
		case <-w.tickC:
			w.tick(work)
		case <-idleC:
			if w.proc != nil {
				w.log.Info("idle session reaped", "after", w.b.cfg.IdleTimeout)
				w.stop("")
				w.resetIdle()
				continue
			}
			if w.b.workerDone(w) {
				return
			}
			w.resetIdle()
		}
		if w.quiet() {
			w.resetIdle()
		}
	}
}

// quiet: nothing running, nothing pending: the idle timer may run.
func (w *worker) quiet() bool {
	return w.turn == nil && len(w.queued) == 0 && len(w.tools) == 0 && !w.hasPendingPrompts() && len(w.mailbox) == 0
}

func (w *worker) resetIdle() {
	d := workerLinger
	if w.proc != nil {
		d = w.b.cfg.IdleTimeout
	}
	if !w.idleTimer.Stop() {
		select {
		case <-w.idleTimer.C:
		default:
		}
	}
	w.idleTimer.Reset(d)
}

func (w *worker) handleInput(ctx context.Context, in *input) {
	switch in.kind {
	case inEvict:
		if w.proc != nil && w.quiet() {
			w.log.Info("idle session stopped to free a slot")
			w.stop("")
		} else if w.proc != nil {
			w.b.slots.keep(string(w.key))
		}
	case inExpired:
		w.onExpired(ctx, in.pending)
	case inRules:
		w.applyDenyRules(ctx)
	case inScheduled:
		w.startScheduled(ctx, in.run)
	case inStopRun:
		if w.schedRun != nil && w.proc != nil && w.turn != nil {
			ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if _, err := w.proc.Interrupt(ictx, true); err != nil {
				w.log.Warn("interrupt scheduled run", "err", err)
			}
			cancel()
			w.notice(ctx, "This scheduled run took longer than its timeout and was stopped.", true)
		}
		w.finishRun(runOutcome{err: context.DeadlineExceeded})
	case inEvent:
		if err := w.loadThread(ctx, in.ev.User); err != nil {
			w.log.Error("load thread", "err", err)
			w.notice(ctx, "Something went wrong reading this thread's state; try again.", true)
			return
		}
		switch {
		case in.ev.Click != nil:
			w.onClick(ctx, in.ev.User, *in.ev.Click)
		case in.ev.Message != nil:
			w.onMessage(ctx, in.ev)
		}
	}
}

func (w *worker) loadThread(ctx context.Context, starter adapters.User) error {
	if w.loaded {
		return nil
	}
	t, ok, err := w.b.store.GetThread(ctx, string(w.key))
	if err != nil {
		return err
	}
	if !ok {
		now := w.b.now()
		t = store.Thread{
			Key: string(w.key), Platform: w.ref.Platform, Channel: w.ref.Channel, ThreadID: w.ref.Thread,
			StartedBy: starter.ID, State: "new", CreatedAt: now, LastActivity: now,
		}
		if err := w.b.store.SaveThread(ctx, t); err != nil {
			return err
		}
	}
	w.thread, w.loaded = t, true
	return nil
}

func (w *worker) saveThread(ctx context.Context) {
	w.thread.LastActivity = w.b.now()
	if err := w.b.store.SaveThread(ctx, w.thread); err != nil {
		w.log.Error("save thread", "err", err)
	}
}

func (w *worker) onMessage(ctx context.Context, ev adapters.Event) {
	text := strings.TrimSpace(ev.Message.Text)
	if text == "" && len(ev.Message.Files) == 0 {
		return
	}
	if w.cmdSchedule(ctx, ev, text) || w.runCommand(ctx, ev, text) {
		return
	}
	if w.typedReply(ctx, ev, text) {
		return
	}
	// A message that would start a session is subject to the per-user
	// thread limit (quota.go).
	if w.quotaGate(ctx, ev, text) {
		return
	}
	w.prompt(ctx, ev, text)
}

// prompt sends text to Claude, starting or resuming the session first.
func (w *worker) prompt(ctx context.Context, ev adapters.Event, text string) {
	header := senderHeader(ev.User)
	if w.schedRun != nil && ev.Thread.Platform == "" {
		// The scheduler's own event (chat events always name a thread).
		header = scheduleHeader(w.schedRun.schedule.ID, w.schedRun.schedule.CreatedBy)
	}
	msg := claudeproc.UserMessage{Text: header + "\n" + text, UUID: newUUID()}
	if ev.Message != nil && len(ev.Message.Files) > 0 {
		// Fetched only now: the sender is allowed, the thread is known.
		msg = w.withFiles(ctx, msg, ev.Message.Files)
	}
	if err := w.ensureProcess(ctx); err != nil {
		if w.life.Err() == nil {
			w.log.Error("start claude", "err", err)
			w.notice(ctx, "Could not start Claude Code: "+err.Error(), true)
		}
		return
	}
	qp := &queuedPrompt{msg: msg, text: text, user: ev.User}
	if w.turn != nil {
		// The CLI queues it (or injects it into a running tool step); the
		// user sees it queued, then taken up (command_lifecycle).
		w.queued[msg.UUID] = qp
	} else {
		w.beginTurn(qp)
		if !w.started {
			w.initial = qp
		}
	}
	if err := w.proc.Send(msg); err != nil {
		w.log.Warn("send to claude failed", "err", err)
		delete(w.queued, msg.UUID)
		w.turn = nil
		w.notice(ctx, "Claude Code was not reachable; send your message again.", true)
	}
	w.updateIdle()
}

// ensureProcess starts (or resumes) the thread's claude process.
func (w *worker) ensureProcess(ctx context.Context) error {
	if w.proc != nil {
		w.b.slots.setBusy(string(w.key), true)
		return nil
	}
	var queuedNotice *adapters.MessageRef
	// Waiting for a slot, and starting claude, end with the bot.
	err := w.b.slots.acquire(w.life, string(w.key), func() { w.b.toWorkerEvict(w.key) }, func(pos int) {
		text := fmt.Sprintf("All %d Claude sessions are busy; this thread is waiting (position %d in the queue).", w.b.cfg.MaxSessions, pos)
		if w.schedRun == nil {
			// Scheduled runs are announced each; a person once.
			text += " Other threads of yours that wait meanwhile are not announced again."
		}
		ref, err := w.ad.Post(ctx, w.ref, adapters.Message{Kind: adapters.KindNotice, Text: text})
		if err == nil {
			queuedNotice = &ref
		}
	})
	if err != nil {
		return err
	}
	if queuedNotice != nil {
		_ = w.ad.Edit(ctx, *queuedNotice, adapters.Message{Kind: adapters.KindNotice, Text: "A Claude session is free; going on."})
	}
	w.b.slots.setBusy(string(w.key), true)
	opts := w.options()
	// A directory stored before the bot checked `cwd`, or one a link now
	// moves, is checked again at every start.
	if why := w.b.unfitWorkdir(resolveExisting(opts.Dir)); why != "" {
		w.b.slots.release(string(w.key))
		return fmt.Errorf("the working directory %s %s; an admin can choose another with `cwd`", opts.Dir, why)
	}
	if w.thread.SessionID == "" {
		w.thread.SessionID = newUUID()
		opts.SessionID = w.thread.SessionID
	} else {
		opts.Resume = w.thread.SessionID
	}
	p, err := w.b.start(w.life, opts)
	if err != nil {
		w.b.slots.release(string(w.key))
		return err
	}
	w.proc, w.events, w.started = p, p.Events(), false
	w.thread.State = "live"
	w.saveThread(ctx)
	w.log.Info("claude started", "session", w.thread.SessionID, "resume", opts.Resume != "", "cwd", opts.Dir)
	return nil
}

func (w *worker) options() claudeproc.Options {
	return claudeproc.Options{
		Bin:            w.b.cfg.ClaudeBin,
		Dir:            w.cwd(context.Background()),
		Model:          w.thread.Model,
		PermissionMode: cliMode(w.thread.Mode),
		Guard:          &claudeproc.Guard{DenyRules: w.cliDenyRules(context.Background())},
		Runner:         w.b.cfg.Runner,
		Session:        claudeproc.Session{Channel: w.ref.ChannelKey(), Thread: string(w.ref.Key())},
		// Claude is told how to read the sender line of each message.
		AppendSystemPrompt: senderSystemPrompt,
		Env:                claudeproc.BuildEnv(w.b.cfg.Env, w.b.cfg.ClaudeEnv),
		MaxLineBytes:       w.b.cfg.MaxLineBytes,
		StopGrace:          w.b.cfg.StopGrace,
		Logger:             w.log,
	}
}

// cwd is the channel's working directory, else the configured default.
func (w *worker) cwd(ctx context.Context) string {
	if c, ok, err := w.b.store.GetChannel(ctx, w.ref.ChannelKey()); err == nil && ok && c.Cwd != "" {
		return c.Cwd
	}
	if w.thread.Cwd != "" {
		return w.thread.Cwd
	}
	dir, err := filepath.Abs(w.b.cfg.Workdir)
	if err != nil {
		return w.b.cfg.Workdir
	}
	return dir
}

// stop ends the thread's process (if any): interrupting a running turn,
// expiring its pending approvals. reason, when set, is told to the thread.
func (w *worker) stop(reason string) {
	ctx := context.Background()
	if w.proc == nil {
		return
	}
	p := w.proc
	if reason != "" {
		// Say why before the CLI cancels them as part of the interrupt.
		for _, pd := range w.b.reg.ExpireThread(string(w.key)) {
			w.settleExpired(ctx, pd, "Expired: "+reason+".")
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 4*w.b.cfg.StopGrace)
	info := p.Close(cctx)
	cancel()
	// Drain what it said before it ended, then let it go.
	if w.events != nil {
		for ev := range w.events {
			if _, ok := ev.(*claudeproc.Exited); ok {
				continue
			}
			w.handleProc(ctx, ev)
		}
	}
	w.afterExit(ctx, info, reason)
}

// afterExit forgets the process and settles what depended on it.
func (w *worker) afterExit(ctx context.Context, info claudeproc.ExitInfo, reason string) {
	w.proc, w.events = nil, nil
	w.b.slots.release(string(w.key))
	why := reason
	if why == "" {
		why = "the session ended"
	}
	for _, p := range w.b.reg.ExpireThread(string(w.key)) {
		w.settleExpired(ctx, p, "Expired: "+why+".")
	}
	if w.turn != nil {
		w.finishTurnAbruptly(ctx, reason)
	}
	w.closeTools(ctx, false, "stopped: "+why)
	for id := range w.queued {
		delete(w.queued, id)
	}
	w.thread.State = "idle"
	w.saveThread(ctx)
	w.finishRun(runOutcome{err: errors.New("Claude Code stopped: " + info.Reason)})
	w.log.Info("claude stopped", "reason", info.Reason)
	w.updateIdle()
}

func (w *worker) notice(ctx context.Context, text string, isErr bool) adapters.MessageRef {
	ref, err := w.ad.Post(ctx, w.ref, adapters.Message{Kind: adapters.KindNotice, Text: text, Error: isErr})
	if err != nil {
		w.log.Warn("post notice", "err", err)
	}
	return ref
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// toWorkerEvict asks a thread's worker to give its slot back.
func (b *Bot) toWorkerEvict(key adapters.ThreadKey) {
	if !b.toWorker(key, input{kind: inEvict}) {
		// Full mailbox: the thread is busy anyway; it keeps its slot and
		// another idle holder is asked (or the waiters are told they wait).
		b.slots.keep(string(key))
	}
}

var errNoProcess = errors.New("no live session")
