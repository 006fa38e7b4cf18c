package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/outbox"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// Bot routes chat events to one worker per thread. Create it with New, then
// Run it; Run returns after an orderly shutdown when ctx ends.
type Bot struct {
	cfg   Config
	log   *slog.Logger
	store *store.Store
	reg   *approvals.Registry
	slots *slots
	start starter
	now   func() time.Time
	// ticker starts each view's refresh (view.go); tests drive their own.
	ticker tickerFunc

	adaptersMu sync.RWMutex
	adapters   map[string]adapters.Adapter

	mu      sync.Mutex
	workers map[adapters.ThreadKey]*worker
	closing bool
	wg      sync.WaitGroup
	// runCtx is the bot's lifetime; workers run on it, never on a delivery's.
	runCtx context.Context
	cancel context.CancelFunc
	idle   chan struct{} // signalled when a worker becomes idle
	// refused remembers the messages whose sender was refused lately: one
	// Slack mention comes as two events (message and app_mention), and the
	// refusal is told and audited once.
	refused *outbox.Registry[string, struct{}]
	storage *storageWatch // storage.go
	// first times turns' first texts to when the platform has them.
	first *firstTexts
	// commands is the command table (commands.go), one for all threads.
	commands []row
	// live are the sessions' processes not seen ending yet (live.go), for Kill.
	live *liveSet
}

// New makes a bot over an open store. It does no I/O.
func New(cfg Config, st *store.Store) *Bot {
	cfg.defaults()
	b := &Bot{
		cfg:      cfg,
		log:      cfg.Logger,
		store:    st,
		reg:      approvals.NewChannelRegistry(channelAdmins(cfg.Scopes), cfg.ApprovalTimeout, cfg.Now),
		slots:    newSlots(cfg.MaxSessions, cfg.Now),
		start:    startReal,
		ticker:   realTicker,
		now:      cfg.Now,
		adapters: make(map[string]adapters.Adapter),
		workers:  make(map[adapters.ThreadKey]*worker),
		idle:     make(chan struct{}, 1),
		refused:  outbox.NewRegistry[string, struct{}](4096, time.Hour, cfg.Now),
		first:    newFirstTexts(cfg.Observer, cfg.Now),
		commands: commandTable(cfg.Extensions),
		live:     newLiveSet(),
	}
	b.storage = newStorageWatch(b.cfg.Faults, b.now)
	b.runCtx, b.cancel = context.WithCancel(context.Background())
	// Each session's process is recorded while it runs, for Recover.
	inner := cfg.Runner
	if inner == nil {
		inner = claudeproc.Local{}
	}
	b.cfg.Runner = recordingRunner{inner: inner, store: st, log: b.log, now: b.now, live: b.live}
	for _, e := range cfg.Extensions {
		e.Init(host{b})
	}
	return b
}

// AddAdapter registers an adapter: the bot posts through it, and its
// calls do not wait on the platform (adapters.Adapter's contract). Its Run
// is the caller's to start, with Deliver.
func (b *Bot) AddAdapter(a adapters.Adapter) {
	b.adaptersMu.Lock()
	defer b.adaptersMu.Unlock()
	b.adapters[a.Name()] = a
	if pt, ok := a.(postTracker); ok {
		pt.OnPosted(b.first.posted)
	}
}

// adapter is the platform's adapter (nil when it has none): what a
// thread's worker posts through, and what calls outside any worker use.
func (b *Bot) adapter(platform string) adapters.Adapter {
	b.adaptersMu.RLock()
	defer b.adaptersMu.RUnlock()
	return b.adapters[platform]
}

// Run drives timers (approval expiry) until ctx ends, then shuts down: no new
// events are taken, every worker stops its session (interrupting running
// turns, expiring pending approvals), and Run returns when all are done.
func (b *Bot) Run(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var sweeps sync.WaitGroup
	for _, e := range b.cfg.Extensions {
		if s, ok := e.(thread.Sweeper); ok {
			sweeps.Go(func() { sweep(ctx, s) })
		}
	}
	for {
		select {
		case <-ctx.Done():
			sweeps.Wait()
			b.shutdown()
			return nil
		case <-tick.C:
			for _, p := range b.reg.Expire() {
				b.toWorker(adapters.ThreadKey(p.ThreadKey), input{kind: inExpired, pending: p})
			}
		}
	}
}

func (b *Bot) shutdown() {
	b.mu.Lock()
	b.closing = true
	n := len(b.workers)
	b.mu.Unlock()
	b.log.Info("shutting down", "threads", n)
	b.cancel()
	b.wg.Wait()
	// What the workers said last (stopped turns, expired prompts) goes
	// out before the adapters are stopped.
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.StopGrace+10*time.Second)
	defer cancel()
	b.adaptersMu.RLock()
	defer b.adaptersMu.RUnlock()
	for name, a := range b.adapters {
		q, ok := a.(queuer)
		if !ok {
			continue
		}
		if err := q.Drain(ctx); err != nil {
			b.log.Warn("messages left unsent at shutdown", "platform", name, "err", err)
		}
	}
}

// WaitIdle returns when no thread has a turn running or work queued (threads
// waiting only for an approval count as idle), or when ctx ends.
func (b *Bot) WaitIdle(ctx context.Context) {
	for {
		if b.allIdle() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-b.idle:
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (b *Bot) allIdle() bool {
	b.mu.Lock()
	for _, w := range b.workers {
		if !w.isIdle() {
			b.mu.Unlock()
			return false
		}
	}
	b.mu.Unlock()
	b.adaptersMu.RLock()
	defer b.adaptersMu.RUnlock()
	for _, a := range b.adapters {
		if q, ok := a.(queuer); ok && !q.Idle() {
			return false
		}
	}
	return true
}

func (b *Bot) signalIdle() {
	select {
	case b.idle <- struct{}{}:
	default:
	}
}

// ErrClosing is returned by Deliver during shutdown.
var ErrClosing = errors.New("bot is shutting down")

// Deliver is given to adapters' Run. It records a message (the dedupe, keyed
// by the message's identity), decides whether it is for the bot, and queues
// it for the thread's worker; it returns in milliseconds (or once the
// thread an accepted event asks for is opened), after which the adapter
// acks the delivery. It returns an error only when the event could
// not be recorded (the platform should deliver it again).
func (b *Bot) Deliver(ctx context.Context, ev adapters.Event) error {
	log := b.log.With("thread", ev.Thread.Key(), "user", ev.User.ID)
	if !b.allowed(ev.Thread, ev.User.ID) {
		if ev.Click != nil || ev.Message != nil && ev.Message.Mentioned {
			if ev.Message != nil && ev.ID() != "" {
				if _, told := b.refused.Get(ev.ID()); told {
					return nil
				}
				b.refused.Put(ev.ID(), struct{}{})
			}
			log.Info("refused: user not allowed")
			b.audit(ctx, ev.Thread, ev.User.ID, "refused", "use", "user not among the users of "+ev.Thread.ChannelKey(), false)
			b.tell(ctx, ev.Thread, ev.User, "You are not allowed to use this bot here. Ask an admin to add you to this channel's users (or CLAUDEOPS_ALLOWED_USERS).")
		}
		return nil
	}
	if ev.Message != nil && ev.Message.OpenThread != nil {
		// Only now, the sender accepted, does the thread appear in the
		// channel (a Slack /claude: adapters.Incoming.OpenThread).
		if b.isClosing() {
			return ErrClosing
		}
		ref, err := ev.Message.OpenThread(ctx)
		if err != nil {
			return fmt.Errorf("open a thread in %s: %w", ev.Thread.Key(), err)
		}
		m := *ev.Message
		m.OpenThread = nil
		ev.Thread, ev.Message = ref, &m
		log = b.log.With("thread", ev.Thread.Key(), "user", ev.User.ID)
	}
	if ev.Message != nil || ev.ID() != "" {
		// Clicks that are events of their own (a Matrix reaction or poll
		// vote) are deduped like messages: a replayed sync acts once.
		if ev.Message != nil && !ev.Message.Mentioned {
			if b.cfg.Scopes.Get(thread.Where(ev.Thread), settings.Reply).Text == "mention" {
				// The channel's threads answer mentions only: a reply
				// without one is the people's among themselves, not
				// recorded, not a turn (a later mention is).
				return nil
			}
			_, known, err := b.store.GetThread(ctx, string(ev.Thread.Key()))
			if err != nil {
				// Not told: the message may not be the bot's at all.
				if _, fault := b.cfg.Faults.Failed("look up a thread", err); fault {
					return fmt.Errorf("look up thread %s: %w (%w)", ev.Thread.Key(), err, adapters.ErrLoggedOnce)
				}
				return fmt.Errorf("look up thread %s: %w", ev.Thread.Key(), err)
			}
			// A thread with a worker is one a mention has just started,
			// before its worker has recorded it: a reply right behind the
			// mention (or read back with it by a catch-up) is the bot's.
			if !known && !b.hasWorker(ev.Thread.Key()) {
				return nil // not addressed to us, and no session here
			}
		}
		text := ""
		if ev.Message != nil {
			text = ev.Message.Text
		}
		fresh, err := b.store.RecordMessage(ctx, store.ReceivedMessage{
			Platform: ev.Thread.Platform, Key: ev.ID(), ThreadKey: string(ev.Thread.Key()),
			UserID: ev.User.ID, Text: text, ReceivedAt: b.now(),
		})
		if err != nil {
			if b.storage.refused(ctx, b.threadDeps(ev.Thread), "record a message", err) {
				return fmt.Errorf("record message %s: %w (%w)", ev.ID(), err, adapters.ErrLoggedOnce)
			}
			return fmt.Errorf("record message %s: %w", ev.ID(), err)
		}
		b.storage.worked()
		if !fresh {
			log.Debug("duplicate delivery ignored", "message", ev.ID())
			return nil
		}
	}
	if !b.toWorker(ev.Thread.Key(), input{kind: inEvent, ev: ev}) {
		if b.isClosing() {
			return ErrClosing
		}
		log.Warn("thread mailbox full, message refused", "message", ev.ID())
		b.notice(ctx, ev.Thread, "This thread has too many messages waiting; this one was not taken. Send it again in a moment.", true)
		if ev.ID() != "" {
			if err := b.store.SettleMessage(ctx, ev.Thread.Platform, ev.ID()); err != nil {
				log.Warn("settle message", "message", ev.ID(), "err", err)
			}
		}
	}
	return nil
}

func (b *Bot) isClosing() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closing
}

// toWorker queues an input for a thread's worker, starting the worker if
// needed. It reports false if the mailbox is full or the bot is closing.
// hasWorker reports whether the thread has a worker now.
func (b *Bot) hasWorker(key adapters.ThreadKey) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.workers[key] != nil
}

func (b *Bot) toWorker(key adapters.ThreadKey, in input) bool {
	in.at = b.now()
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		return false
	}
	w := b.workers[key]
	if w == nil {
		ref, ok := key.Ref()
		if in.kind == inEvent {
			ref, ok = in.ev.Thread, true
		}
		if !ok {
			b.mu.Unlock()
			return false
		}
		w = newWorker(b, ref)
		b.workers[key] = w
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			w.run(b.runCtx)
		}()
	}
	w.pendingInputs.Add(1)
	b.mu.Unlock()
	select {
	case w.mailbox <- &in:
		return true
	default:
		w.pendingInputs.Add(-1)
		return false
	}
}

// workerDone removes an idle worker that has nothing left to do.
func (b *Bot) workerDone(w *worker) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.pendingInputs.Load() > 0 || b.closing {
		return false
	}
	delete(b.workers, w.key)
	if q, ok := w.ad.(queuer); ok {
		q.Forget(w.ref)
	}
	return true
}

// MayUse reports whether user may use the bot in channel of platform:
// the users and admins the settings name for that channel (its scopes,
// the bot's included) and the bot admins. Adapters ask it before joining
// a room someone invited the bot to, and of what a catch-up finds. It
// asks of that channel alone, never "any channel's users": an invite is
// to one room, and who may use another room must not bring the bot in.
func (b *Bot) MayUse(platform, channel, user string) bool {
	return b.allowed(adapters.ThreadRef{Platform: platform, Channel: channel}, user)
}

func (b *Bot) allowed(t adapters.ThreadRef, user string) bool {
	return user != "" && b.cfg.Scopes.MayUse(thread.Where(t), user)
}

// channelAdmins is the approvals registry's check of who administers a
// channel (by its key, "platform/channel"): the settings' admins there,
// and the bot admins.
func channelAdmins(r *settings.Resolver) func(channelKey, user string) bool {
	return func(channelKey, user string) bool {
		platform, channel, _ := strings.Cut(channelKey, "/")
		return r.IsAdmin(settings.Where{Platform: platform, Channel: channel}, user)
	}
}

func (b *Bot) audit(ctx context.Context, t adapters.ThreadRef, user, action, target, detail string, allowed bool) {
	b.threadDeps(t).audit(ctx, user, action, target, detail, allowed)
}

// tell says something to one user: privately where the platform can.
func (b *Bot) tell(ctx context.Context, t adapters.ThreadRef, u adapters.User, text string) {
	b.threadDeps(t).tell(ctx, u, text)
}

func (b *Bot) notice(ctx context.Context, t adapters.ThreadRef, text string, isErr bool) {
	b.threadDeps(t).notice(ctx, text, isErr)
}

// toWorkerEvict asks a thread's worker to give its slot back.
func (b *Bot) toWorkerEvict(key adapters.ThreadKey) {
	if !b.toWorker(key, input{kind: inEvict}) {
		// Full mailbox: the thread is busy anyway; it keeps its slot and
		// another idle holder is asked (or the waiters are told they wait).
		b.slots.keep(string(key))
	}
}

// LiveSessions is the number of live claude processes.
func (b *Bot) LiveSessions() int { return b.slots.live() }

// QueuedSessions is the number of threads waiting for a session slot
// (CLAUDEOPS_MAX_SESSIONS) to start their claude: behind busy sessions,
// or while an idle one gives its slot back.
func (b *Bot) QueuedSessions() int { return b.slots.queued() }
