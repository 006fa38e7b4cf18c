package reviews

import (
	"errors"
	"sync"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
)

// MaxPending bounds what waits for `review` in one thread.
const MaxPending = 20

// Item is a comment or review on a pull request, from the forge.
type Item struct {
	// PR is the pull request's page; Number its number.
	PR     string
	Number int64
	// Author is the forge login that wrote it (nobody in the chat).
	Author string
	// What says what it is ("Comment", "Review (approved)").
	What string
	// Body is the author's text as written.
	Body string
	// Quoted is the line Claude is given: every string of the author's
	// in «…» (triggers.Review.Quoted).
	Quoted string
}

// Extension is the review loop's extension: one per bot.
type Extension struct {
	host thread.Host

	mu      sync.Mutex
	pending map[adapters.ThreadKey][]Item
}

var _ thread.Commander = (*Extension)(nil)

// New makes the extension.
func New() *Extension { return &Extension{pending: map[adapters.ThreadKey][]Item{}} }

func (e *Extension) Name() string       { return "reviews" }
func (e *Extension) Init(h thread.Host) { e.host = h }

// Attach makes the extension's part in thread t.
func (e *Extension) Attach(t thread.Thread) any { return &part{ext: e, t: t} }

// arrived is an Item on its way to its thread's worker.
type arrived struct{ item Item }

// ErrBusy: the thread's mailbox is full, or the bot is closing.
var ErrBusy = errors.New("the thread is busy or the bot is closing")

// Deliver shows it in thread key (its worker started if it has none) and
// keeps it for `review`; it returns once the thread has it queued.
func (e *Extension) Deliver(key adapters.ThreadKey, it Item) error {
	if !e.host.PostTo(key, arrived{it}) {
		return ErrBusy
	}
	return nil
}

// keep adds it to what waits in key; dropped says the oldest went.
func (e *Extension) keep(key adapters.ThreadKey, it Item) (dropped bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := append(e.pending[key], it)
	if len(p) > MaxPending {
		p, dropped = p[len(p)-MaxPending:], true
	}
	e.pending[key] = p
	return dropped
}

// take is what waits in key, which then waits no more.
func (e *Extension) take(key adapters.ThreadKey) []Item {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.pending[key]
	delete(e.pending, key)
	return p
}

// putBack returns items not sent, before any that arrived since.
func (e *Extension) putBack(key adapters.ThreadKey, items []Item) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := append(items, e.pending[key]...)
	if len(p) > MaxPending {
		p = p[len(p)-MaxPending:]
	}
	e.pending[key] = p
}
