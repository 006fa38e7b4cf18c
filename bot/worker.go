package bot

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

type inputKind int

const (
	inEvent   inputKind = iota // a chat event for this thread
	inExpired                  // an approval of this thread expired
	inEvict                    // give the process slot back
	inRules                    // the channel's deny rules changed
	inPosted                   // a message for the thread's extension parts
)

type input struct {
	kind    inputKind
	ev      adapters.Event
	pending approvals.Pending
	msg     any       // inPosted: for the parts' Receive
	at      time.Time // when it was queued (toWorker)
}

// workerLinger is how long a worker with no process and nothing to do stays
// before it exits (the thread itself lives on in the store).
const workerLinger = time.Minute

// worker owns one thread: its record, its session (the claude process), its
// view (what the thread shows of the turns) and its desk (the prompts
// waiting for people). Everything about the thread happens on the worker's
// goroutine, in arrival order, so its state needs no locks. It routes each
// input to the part it is for and applies what the parts decide.
type worker struct {
	deps
	// b is the bot the worker reports to: idle, done, rules changed, a
	// slot to give back, the scheduler.
	b       *Bot
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

	sess session
	view view
	desk desk
	// queued are the messages sent while a turn ran, by uuid.
	queued map[string]*queuedPrompt
	// awaitingTurn are the messages sent to claude as a turn's prompt
	// whose turn is not recorded yet (settle.go).
	awaitingTurn []msgKey
	// handedOver: the message being handled went to claude; it is
	// settled once its turn is recorded, not when handling ends.
	handedOver bool
	// arrived is when the event being handled reached the bot.
	arrived time.Time
	// toldUnverified: who was told why an unverified event did not count,
	// by user and reason (unverified.go).
	toldUnverified map[string]bool

	// parts are the extensions' parts in this thread, attached as the
	// worker starts, and face what they see of it (face.go); posted is
	// what they posted for themselves.
	parts  hooks
	face   *face
	posted *posted
	// slash decides the thread's slash commands (slashpart.go).
	slash slashes
	// run is the unattended run the thread is doing (face.BeginRun).
	autoRun *thread.Run

	idleTimer *time.Timer
	records   records  // what the thread was shown that the storage refused (records.go)
	lines     lineBook // where its tool lines are, for the next start (restartlines.go)
}

func newWorker(b *Bot, ref adapters.ThreadRef) *worker {
	d := b.threadDeps(ref)
	w := &worker{
		deps:    d,
		b:       b,
		mailbox: make(chan *input, b.cfg.MailboxSize),
		life:    b.runCtx,
		view:    newView(d),
		desk:    newDesk(d),
		slash:   slashes{deps: d},
		queued:  make(map[string]*queuedPrompt),
		posted:  newPosted(),
		records: records{deps: d},
		lines:   lineBook{deps: d},
	}
	w.sess = session{deps: d, start: b.start, evict: func() { b.toWorkerEvict(d.key) },
		launch: func(l *thread.Launch) {
			each(w.parts, func(p thread.Launcher) { p.BeforeLaunch(context.Background(), l) })
		}}
	w.idle.Store(true)
	return w
}

// isIdle: no turn running and nothing queued (pending approvals alone do not
// count: nobody may be there to answer them).
func (w *worker) isIdle() bool { return w.idle.Load() && w.pendingInputs.Load() == 0 }

func (w *worker) updateIdle() {
	busy := w.view.running() || len(w.queued) > 0 || w.view.hasTools()
	w.idle.Store(!busy)
	w.slots.setBusy(string(w.key), busy || w.desk.hasOpen())
	if !busy {
		w.b.signalIdle()
	}
}

func (w *worker) run(ctx context.Context) {
	w.idleTimer = time.NewTimer(workerLinger)
	defer w.idleTimer.Stop()
	w.face = &face{host: host{w.b}, w: w}
	w.parts = attach(w.b.cfg.Extensions, w.face)
	defer func() { w.records.lastTry(); w.lines.sync(context.Background(), &w.view); w.posted.close() }() // the records owed: records.go, restartlines.go
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
		case <-w.posted.ready:
			for _, m := range w.posted.take() {
				w.parts.receive(work, m)
			}
		case ev, ok := <-w.sess.events:
			if !ok {
				w.sess.events = nil
				continue
			}
			w.handleProc(work, ev)
		case <-w.view.tickC:
			w.view.tick(work)
		case <-w.records.C:
			w.records.writeOwed(work)
		case <-idleC:
			if w.sess.live() {
				w.log.Info("idle session reaped", "after", w.cfg.IdleTimeout)
				w.stop("")
				w.resetIdle()
				continue
			}
			if !w.records.pending() && w.b.workerDone(w) { // owed records keep it
				return
			}
			w.resetIdle()
		}
		s := w.state()
		each(w.parts, func(p thread.Watcher) { p.Watch(work, s) })
		w.lines.sync(work, &w.view)
		if w.quiet() {
			w.resetIdle()
		}
	}
}

// quiet: nothing running, nothing pending: the idle timer may run.
func (w *worker) quiet() bool {
	return !w.view.running() && len(w.queued) == 0 && !w.view.hasTools() && !w.desk.hasOpen() && len(w.mailbox) == 0
}

func (w *worker) resetIdle() {
	d := workerLinger
	if w.sess.live() {
		d = w.cfg.IdleTimeout
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
		if w.sess.live() && w.quiet() {
			w.log.Info("idle session stopped to free a slot")
			w.stop("")
		} else if w.sess.live() {
			w.slots.keep(string(w.key))
		}
	case inExpired:
		w.onExpired(ctx, in.pending)
	case inRules:
		w.applyDenyRules(ctx)
	case inPosted:
		w.parts.receive(ctx, in.msg)
	case inEvent:
		w.arrived = in.at
		w.onEvent(ctx, in.ev)
	}
}

// state is the thread's state now, as its parts see it.
func (w *worker) state() thread.State {
	return thread.State{
		Live: w.sess.live(), Turn: w.view.turnNo(), Queued: len(w.queued), Tools: w.view.hasTools(),
		Prompts: w.desk.openCount(), Inputs: len(w.mailbox),
	}
}

// onEvent handles a chat event, and settles it unless it went to claude
// (then its turn settles it).
func (w *worker) onEvent(ctx context.Context, ev adapters.Event) {
	w.handedOver = false
	defer func() {
		if !w.handedOver {
			w.records.settle(ctx, keyOf(ev))
		}
	}()
	if err := w.loadThread(ctx, ev.User); err != nil {
		if !w.storage.refused(ctx, w.deps, "read a thread", err) {
			w.log.Error("load thread", "err", err)
			w.notice(ctx, "Something went wrong reading this thread's state; try again.", true)
		}
		return
	}
	if w.refuseUnverified(ctx, ev) {
		return
	}
	switch {
	case ev.Click != nil:
		w.onClick(ctx, ev.User, *ev.Click)
	case ev.Message != nil:
		w.onMessage(ctx, ev)
	}
}

func (w *worker) loadThread(ctx context.Context, starter adapters.User) error {
	if w.loaded {
		return nil
	}
	t, ok, err := w.store.GetThread(ctx, string(w.key))
	if err != nil {
		return err
	}
	if !ok {
		// Kept in memory until something worth keeping happens (a
		// session, a setting): a mention refused (quota, budget) or a
		// command that changes nothing leaves no row behind.
		now := w.now()
		t = store.Thread{
			Key: string(w.key), Platform: w.ref.Platform, Channel: w.ref.Channel, ThreadID: w.ref.Thread,
			StartedBy: starter.ID, State: "new", CreatedAt: now, LastActivity: now,
		}
	}
	w.thread, w.loaded = t, true
	return nil
}

func (w *worker) saveThread(ctx context.Context) {
	w.thread.LastActivity = w.now()
	if err := w.store.SaveThread(ctx, w.thread); err != nil {
		if !w.storageFault("save a thread", err) {
			w.log.Error("save thread", "err", err)
		}
		return
	}
	w.storage.worked()
}

func (w *worker) onMessage(ctx context.Context, ev adapters.Event) {
	text := strings.TrimSpace(ev.Message.Text)
	if text == "" && len(ev.Message.Files) == 0 {
		return
	}
	slash := false
	if rest, ok := escaped(w.b.commands, text, w.mayChange(ev.User.ID)); ok { // didyoumean.go
		text = rest
	} else {
		var taken bool
		if slash, taken = w.forTheBot(ctx, ev, text); taken {
			return
		}
	}
	// A message that would start a session is subject to the per-user
	// thread limit (quota.go).
	if w.quotaGate(ctx, ev, text) {
		return
	}
	_ = w.prompt(ctx, promptIn{Prompt: thread.Prompt{Text: text, User: ev.User}, files: ev.Message.Files, key: keyOf(ev), at: w.arrived, slash: slash})
}

// promptIn is a message on its way to Claude, with what the kernel keeps
// of it: its files, the message it came from (none for a run's prompt),
// and when a person's message reached the bot.
type promptIn struct {
	thread.Prompt
	// header is the line the bot writes first (a run's), else the
	// sender's.
	header string
	files  []adapters.File
	key    msgKey
	at     time.Time
	// slash: the text is a slash command, sent without the header once
	// the CLI's list allows it (slash.go).
	slash bool
}

// errUnreachable: the prompt could not be written to claude.
var errUnreachable = errors.New("Claude Code was not reachable")

// errSlashNotSent: a slash command was not sent (the thread was told why).
var errSlashNotSent = errors.New("the slash command was not sent")

// prompt sends p to Claude, starting or resuming the session first. It
// returns nil once claude has it, else why not (the thread was told).
func (w *worker) prompt(ctx context.Context, p promptIn) error {
	header := p.header
	if header == "" {
		header = senderHeader(p.User)
	}
	// A refusal comes before anything is fetched or started.
	if err := w.gate(ctx, p.Prompt); err != nil {
		return err
	}
	msg := claudeproc.UserMessage{Text: header + "\n" + p.Text, UUID: newUUID()}
	if p.slash {
		msg.Text = p.Text
	}
	if len(p.files) > 0 {
		// Fetched only now: the sender is allowed, the thread is known;
		// and into the thread's worktree, made first on its first message.
		if !w.sess.live() {
			if err := w.parts.prepare(ctx); err != nil {
				w.log.Error("prepare the session", "err", err)
				w.notice(ctx, "Could not start Claude Code: "+err.Error(), true)
				return err
			}
		}
		msg = w.withFiles(ctx, msg, p.files)
	}
	if err := w.ensureProcess(ctx); err != nil {
		if w.life.Err() == nil {
			w.log.Error("start claude", "err", err)
			w.notice(ctx, "Could not start Claude Code: "+err.Error(), true)
		}
		return err
	}
	if p.slash {
		cmds, err := w.sess.commands(ctx)
		blocks, step := w.slash.allowed(ctx, p.Text, p.User, cmds, err, w.thread.StartedBy, w.cwd(ctx))
		if step == slashStarterOnly {
			name, _, _ := parseSlash(p.Text)
			w.refuseChange(ctx, p.User, "use `/"+name+"` in this thread")
		}
		if step != slashSend {
			return errSlashNotSent
		}
		if blocks != nil {
			msg = claudeproc.UserMessage{Content: blocks, UUID: msg.UUID}
		}
	}
	return w.send(ctx, &queuedPrompt{msg: msg, text: p.Text, user: p.User, key: p.key, at: p.at})
}

// gate asks the PromptGates about p: a refusal is told and audited.
func (w *worker) gate(ctx context.Context, p thread.Prompt) error {
	err := w.parts.beforePrompt(ctx, p)
	if err == nil {
		return nil
	}
	why, actor := err.Error(), p.User.ID
	if p.Auto != "" {
		actor = p.Auto
	}
	w.notice(ctx, "Not sent to Claude: "+why+".", true)
	w.audit(ctx, actor, "refused", "prompt", why, false)
	return &thread.Refused{Why: why}
}

// send writes qp to the live claude: as the turn's prompt, or queued
// behind the running turn.
func (w *worker) send(ctx context.Context, qp *queuedPrompt) error {
	defer w.updateIdle()
	queued := w.view.running() || len(w.queued) > 0
	if queued {
		// The CLI queues it (or injects it into a running tool step); the
		// user sees it queued, then taken up (command_lifecycle). Messages
		// the CLI still holds mean it is busy even between a turn's result
		// and its taking them up: this one waits behind them.
		w.queued[qp.msg.UUID] = qp
	} else {
		w.view.begin(qp.text)
		w.view.asked(qp.at)
		w.sess.sent(qp)
	}
	if err := w.sess.proc.Send(qp.msg); err != nil {
		w.log.Warn("send to claude failed", "err", err)
		delete(w.queued, qp.msg.UUID)
		w.view.turn = nil
		w.notice(ctx, "Claude Code was not reachable; send your message again.", true)
		return errUnreachable
	}
	w.handedOver = true
	if !queued {
		w.awaitingTurn = append(w.awaitingTurn, qp.key)
	}
	return nil
}

// ensureProcess starts (or resumes) the thread's claude process.
func (w *worker) ensureProcess(ctx context.Context) error {
	w.refreshInstructions(ctx)
	if w.sess.live() {
		w.slots.setBusy(string(w.key), true)
		return nil
	}
	if err := w.parts.prepare(ctx); err != nil {
		return err
	}
	w.thread.Mode = launchFor(w.cfg.Scopes, w.ref, w.thread).mode.value // its own, else its channel's
	// Waiting for a slot, and starting claude, end with the bot.
	id, err := w.sess.open(ctx, w.life, w.options, w.thread.SessionID, w.autoRun == nil)
	if id != "" {
		w.thread.SessionID = id
	}
	if err != nil {
		return err
	}
	w.thread.State = "live"
	w.saveThread(ctx)
	w.sess.mcp = mcptools.New(w.mcpEnv(ctx))
	return nil
}

func (w *worker) options() claudeproc.Options {
	return w.withSystemPrompt(launchFor(w.cfg.Scopes, w.ref, w.thread).apply(claudeproc.Options{
		Bin:            w.cfg.ClaudeBin,
		Dir:            w.cwd(context.Background()),
		PermissionMode: cliMode(w.thread.Mode),
		Guard:          &claudeproc.Guard{DenyRules: w.cliDenyRules(context.Background())},
		SDKMCPServers:  []string{mcptools.ServerName},
		SkillsBase:     w.cfg.SkillsBase,
		Runner:         w.cfg.Runner,
		Session:        sessionOf(w.ref),
		// What the runner waits on (a Pod waiting for capacity) is told
		// in the thread: a start may take minutes then.
		Progress:     func(text string) { w.notice(context.Background(), text, false) },
		Env:          claudeproc.BuildEnv(w.cfg.Env, w.cfg.ClaudeEnv),
		MaxLineBytes: w.cfg.MaxLineBytes,
		StopGrace:    w.cfg.StopGrace,
		Logger:       w.log,
	}))
}

// cwd is the thread's worktree, else the channel's working directory, else
// the configured default.
func (w *worker) cwd(ctx context.Context) string {
	if w.thread.Worktree != "" {
		return w.thread.Worktree
	}
	if c, ok, err := w.store.GetChannel(ctx, w.ref.ChannelKey()); err == nil && ok && c.Cwd != "" {
		return c.Cwd
	}
	if w.thread.Cwd != "" {
		return w.thread.Cwd
	}
	return w.cfg.Workdir
}
