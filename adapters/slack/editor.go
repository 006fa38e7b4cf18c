package slack

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// editor sends coalesced edits: per message only the latest content is
// kept; messages are served in the order they became dirty, each at most
// once per EditInterval unless the content is final. One id is never sent
// twice at once, so a later version of it never lands before an earlier.
type editor struct {
	a *Adapter
	// what the edits are, and how loud a failure is (logs).
	what     string
	failLvl  slog.Level
	mu       sync.Mutex
	wake     chan struct{}
	queue    []string
	latest   map[string]*pendingEdit
	last     map[string]time.Time
	busy     map[string]bool
	sweepLen int // len(last) that triggers the next sweep of stale entries
}

// minSweep is the size of last below which it is not swept.
const minSweep = 64

type pendingEdit struct {
	apply func(context.Context) error
	final bool
}

func newEditor(a *Adapter, what string, failLvl slog.Level) *editor {
	return &editor{a: a, what: what, failLvl: failLvl, wake: make(chan struct{}, 1), sweepLen: minSweep,
		latest: map[string]*pendingEdit{}, last: map[string]time.Time{}, busy: map[string]bool{}}
}

func (e *editor) set(id string, apply func(context.Context) error, final bool) {
	e.mu.Lock()
	if prev, ok := e.latest[id]; ok {
		prev.apply, prev.final = apply, prev.final || final
	} else {
		e.latest[id] = &pendingEdit{apply: apply, final: final}
		e.queue = append(e.queue, id)
	}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// pending counts edits not yet sent (queued or in flight).
func (e *editor) pending() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.latest) + len(e.busy)
}

// run serves edits with a few senders until ctx ends, then sends what is
// left (bounded) so that final texts land.
func (e *editor) run(ctx context.Context) {
	const senders = 4
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.serve(ctx)
		}()
	}
	wg.Wait()
	drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for e.pending() > 0 && drain.Err() == nil {
		if !e.next(drain, true) {
			break
		}
	}
}

func (e *editor) serve(ctx context.Context) {
	for ctx.Err() == nil {
		if e.next(ctx, false) {
			continue
		}
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// next sends one due edit; it reports whether it did.
func (e *editor) next(ctx context.Context, ignorePace bool) bool {
	e.mu.Lock()
	now := e.a.now()
	idx := -1
	for i, id := range e.queue {
		if e.busy[id] {
			continue
		}
		pe := e.latest[id]
		if ignorePace || pe.final || now.Sub(e.last[id]) >= e.a.cfg.EditInterval {
			idx = i
			break
		}
	}
	if idx < 0 {
		e.mu.Unlock()
		return false
	}
	id := e.queue[idx]
	e.queue = append(e.queue[:idx], e.queue[idx+1:]...)
	pe := e.latest[id]
	delete(e.latest, id)
	e.busy[id] = true
	e.mu.Unlock()

	err := pe.apply(ctx)

	e.mu.Lock()
	delete(e.busy, id)
	e.last[id] = e.a.now()
	e.sweepLocked()
	if err != nil && !errors.Is(err, context.Canceled) {
		e.a.log.Log(ctx, e.failLvl, "slack: "+e.what+" failed", "id", id, "err", err)
		if _, newer := e.latest[id]; !newer && ctx.Err() == nil && retryable(err) {
			e.latest[id] = pe
			e.queue = append(e.queue, id)
		}
	}
	if _, again := e.latest[id]; again && !contains(e.queue, id) {
		e.queue = append(e.queue, id)
	}
	e.mu.Unlock()
	return true
}

// sweepLocked forgets when ids were last sent once that no longer paces
// them (an id not in last is due, like one sent EditInterval ago), so that
// last holds only the recent ones. Amortised: it runs when last has doubled.
func (e *editor) sweepLocked() {
	if len(e.last) < e.sweepLen {
		return
	}
	now := e.a.now()
	for id, t := range e.last {
		if now.Sub(t) >= e.a.cfg.EditInterval {
			delete(e.last, id)
		}
	}
	e.sweepLen = max(minSweep, 2*len(e.last))
}

// lastLen is how many ids last holds (tests).
func (e *editor) lastLen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.last)
}

func contains(q []string, id string) bool {
	for _, x := range q {
		if x == id {
			return true
		}
	}
	return false
}

// retryable: transport trouble, not a refusal of the content.
func retryable(err error) bool {
	var se slack.SlackErrorResponse
	return !errors.As(err, &se) && !errors.Is(err, errForgotten)
}
