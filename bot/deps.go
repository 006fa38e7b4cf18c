package bot

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// deps are what one thread's worker and its parts (session, turn view,
// prompt desk) need of the bot, handed to them instead of *Bot: the
// thread, its adapter, the store, the approvals registry, the slots, the
// clock, a logger and the configuration (read only).
type deps struct {
	ref adapters.ThreadRef
	key adapters.ThreadKey
	// ad is the thread's platform: its calls never wait on the platform
	// (Ask excepted), and its optional interfaces are asked of it.
	ad  adapters.Adapter
	log *slog.Logger
	// tag names the running turn in log's lines (turnlog.go).
	tag   *turnTag
	now   func() time.Time
	store *store.Store
	reg   *approvals.Registry
	slots *slots
	cfg   *Config
	first *firstTexts // times the first text of turns (firsttext.go)
	// storage tells the log and the thread of the storage failing (storage.go).
	storage *storageWatch

	// ticker starts the view's refresh: a time.Ticker but in tests.
	ticker tickerFunc
}

// threadDeps are the deps of the thread ref.
func (b *Bot) threadDeps(ref adapters.ThreadRef) deps {
	tag := new(turnTag)
	return deps{
		ref: ref, key: ref.Key(), ad: b.adapter(ref.Platform), log: withTurn(b.log.With("thread", ref.Key()), tag),
		tag: tag, now: b.now, ticker: b.ticker, store: b.store, reg: b.reg, slots: b.slots, cfg: &b.cfg, first: b.first,
		storage: b.storage,
	}
}

// isAdmin: user administers the thread's channel (its admins setting) or
// is a bot admin.
func (d deps) isAdmin(user string) bool { return d.cfg.Scopes.IsAdmin(thread.Where(d.ref), user) }

// audit records what user did (or was refused) in the thread.
func (d deps) audit(ctx context.Context, user, action, target, detail string, allowed bool) {
	err := d.store.Audit(ctx, store.AuditEntry{At: d.now(), ThreadKey: string(d.key), UserID: user, Action: action, Target: target, Detail: detail, Allowed: allowed})
	if err != nil && !d.storageFault("write an audit entry", err) {
		d.log.Error("write audit entry", "action", action, "err", err)
	}
}

// storageFault says whether err, met while doing what, is the storage
// failing: then the log has it already (once per cause), and the caller
// logs nothing of its own.
func (d deps) storageFault(what string, err error) bool {
	_, fault := d.cfg.Faults.Failed(what, err)
	return fault
}

// tell says something to one user: privately where the platform can.
func (d deps) tell(ctx context.Context, u adapters.User, text string) {
	if d.ad == nil {
		return
	}
	if tl, ok := d.ad.(adapters.Teller); ok {
		if err := tl.Tell(ctx, d.ref, u, text); err == nil {
			return
		}
	}
	d.notice(ctx, text, false)
}

// notice says something in the thread.
func (d deps) notice(ctx context.Context, text string, isErr bool) adapters.MessageRef {
	if d.ad == nil {
		return adapters.MessageRef{}
	}
	ref, err := d.ad.Post(ctx, d.ref, adapters.Message{Kind: adapters.KindNotice, Text: text, Error: isErr})
	if err != nil {
		d.log.Warn("post notice", "err", err)
	}
	return ref
}

func (d deps) reply(ctx context.Context, text string) { d.notice(ctx, text, false) }

func noticeMsg(text string) adapters.Message {
	return adapters.Message{Kind: adapters.KindNotice, Text: text}
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// tickerFunc starts a refresh every d: the channel its ticks come on and
// how to stop them. A test hands one it ticks itself.
type tickerFunc func(d time.Duration) (<-chan time.Time, func())

// realTicker is a time.Ticker.
func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
