package outbox

import (
	"context"
	"sync"
	"time"
)

// Send makes message id show c on the platform: what the Editor calls,
// with the latest content set for id. It waits out the platform's rate
// limits itself (the Editor's interval is per message, above them).
type Send[C any] func(ctx context.Context, id string, c C) error

// Config tunes an Editor.
type Config struct {
	// Interval is the least time between two sends of one message; an
	// urgent edit does not wait for it.
	Interval time.Duration
	// Senders is how many sends may be in flight at once, for different
	// threads (default 4). A thread's sends go one at a time, in order.
	Senders int
	// Retry says whether a failed send is tried again (default: no). An
	// edit superseded meanwhile is not: the newer content is sent instead.
	Retry func(error) bool
	// Tries bounds the tries of one edit when Retry allows them (0: no
	// bound; the edit is tried again, paced, until it lands or Close
	// gives up).
	Tries int
	// Hold is how long Hold keeps a message's final edit back, for what
	// the thread shows next (the turn's footer) to travel with it in one
	// call (0: Hold is an urgent Set).
	Hold time.Duration
	// Drain is how long Close keeps sending what is pending (default 30 s).
	Drain time.Duration
	// Failed is told of every failed send (logs).
	Failed func(id string, err error)
	Clock  Clock
}

// Editor sends the edits of posted messages, coalesced and paced: per
// message only the latest content is kept and sent, at most once per
// Interval; an urgent edit (a message's final state) is sent at once and
// is never dropped by coalescing (a later Set keeps it urgent). The sends
// of one thread go one at a time, in the order the edits became due, and
// FlushThread sends a thread's urgent edits before the adapter posts in
// it, so the thread shows what the bot did in the order it did it.
//
// One owner goroutine dispatches; Close sends what is pending (within
// Config.Drain) and stops it.
type Editor[C any] struct {
	cfg  Config
	send Send[C]

	mu      sync.Mutex
	items   map[string]*item[C]
	queue   []string        // ids with a pending edit, in the order they became pending
	threads map[string]bool // threads with a send in flight
	changed chan struct{}   // closed (and replaced) when a send ends
	sent    int
	inUse   int       // sends in flight
	sweepAt int       // len(items) that triggers the next sweep
	swept   time.Time // when the last sweep ran
	closing bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

type item[C any] struct {
	thread  string
	c       C
	pending bool      // c is still to be sent
	urgent  bool      // the pending edit is urgent
	busy    bool      // a send of this id is in flight
	busyUrg bool      // the send in flight is urgent
	held    time.Time // the pending urgent edit waits until then (hold.go)
	last    time.Time
	tries   int
}

const minSweep = 64

// NewEditor starts an editor sending with send.
func NewEditor[C any](cfg Config, send Send[C]) *Editor[C] {
	if cfg.Senders <= 0 {
		cfg.Senders = 4
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 30 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.Retry == nil {
		cfg.Retry = func(error) bool { return false }
	}
	if cfg.Failed == nil {
		cfg.Failed = func(string, error) {}
	}
	e := &Editor[C]{cfg: cfg, send: send, items: map[string]*item[C]{}, threads: map[string]bool{},
		changed: make(chan struct{}), sweepAt: minSweep,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go e.run()
	return e
}

// Set makes c the next content of message id in thread; urgent marks it
// the message's final state. It returns at once.
func (e *Editor[C]) Set(thread, id string, c C, urgent bool) {
	e.mu.Lock()
	it := e.items[id]
	if it == nil {
		it = &item[C]{thread: thread}
		e.items[id] = it
	}
	it.c, it.held = c, time.Time{} // a newer edit supersedes a hold
	if it.pending {
		it.urgent = it.urgent || urgent
	} else {
		it.pending, it.urgent, it.tries = true, urgent, 0
		e.queue = append(e.queue, id)
	}
	e.mu.Unlock()
	e.poke()
}

// Posted records that message id of thread was just posted: the post
// counts as a send for pacing, so the first live edit waits an interval
// after it rather than following it at once (a message never edited
// would otherwise count as edited long ago). An edit already pending is
// left as it is.
func (e *Editor[C]) Posted(thread, id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	it := e.items[id]
	if it == nil {
		it = &item[C]{thread: thread}
		e.items[id] = it
	}
	it.last = e.cfg.Clock.Now()
}

func (e *Editor[C]) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Flush sends id's pending edit now, whatever the interval, and returns
// once it has landed (nil also when nothing was pending). An edit of id
// already in flight is waited for. A failed send is left to be retried.
func (e *Editor[C]) Flush(ctx context.Context, id string) error {
	for {
		e.mu.Lock()
		it := e.items[id]
		switch {
		case it == nil || !it.pending && !it.busy:
			e.mu.Unlock()
			return nil
		case it.busy || e.threads[it.thread]:
			if err := e.awaitChangeLocked(ctx); err != nil {
				return err
			}
			continue
		}
		c, urgent := e.takeLocked(id, it)
		e.inUse++
		e.mu.Unlock()
		return e.sendOne(ctx, id, it, c, urgent)
	}
}

// Discard drops id's pending edit, unsent, and waits (within ctx) for a
// send of id in flight to end: for content a newer event has made moot,
// such as a status line that the adapter's next post clears anyway.
func (e *Editor[C]) Discard(ctx context.Context, id string) error {
	for {
		e.mu.Lock()
		it := e.items[id]
		if it != nil && it.pending {
			for i, q := range e.queue {
				if q == id {
					e.queue = append(e.queue[:i], e.queue[i+1:]...)
					break
				}
			}
			var zero C
			it.c, it.pending, it.urgent, it.held = zero, false, false, time.Time{}
		}
		if it == nil || !it.busy {
			e.mu.Unlock()
			return nil
		}
		if err := e.awaitChangeLocked(ctx); err != nil {
			return err
		}
	}
}

// awaitChangeLocked releases e.mu and waits for the next change of any
// item (a send ending, an edit set) or ctx's end.
func (e *Editor[C]) awaitChangeLocked(ctx context.Context) error {
	ch := e.changed
	e.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-ch:
		return nil
	}
}

// FlushThread sends the thread's pending urgent edits (all of its pending
// edits with all) and waits for its urgent ones in flight: what the
// adapter posts next in the thread comes after them.
func (e *Editor[C]) FlushThread(ctx context.Context, thread string, all bool) error {
	e.mu.Lock()
	var ids []string
	for _, id := range e.queue {
		if it := e.items[id]; it.thread == thread && (all || it.urgent) {
			ids = append(ids, id)
		}
	}
	for id, it := range e.items {
		if it.thread == thread && it.busy && (all || it.busyUrg) && !it.pending {
			ids = append(ids, id)
		}
	}
	e.mu.Unlock()
	var first error
	for _, id := range ids {
		if err := e.Flush(ctx, id); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Pending counts the edits not yet landed (pending or in flight).
func (e *Editor[C]) Pending() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queue) + e.inUse
}

// Sent counts the edits that landed.
func (e *Editor[C]) Sent() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sent
}

// Tracked is how many messages the editor holds state for: those with an
// edit pending or in flight and those sent within the last interval (tests
// check it stays bounded).
func (e *Editor[C]) Tracked() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.items)
}

// Close sends what is pending, ignoring the interval, for at most
// Config.Drain, then stops the editor. Sets after Close are sent by
// nobody (Flush still sends).
func (e *Editor[C]) Close() {
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		<-e.done
		return
	}
	e.closing = true
	e.mu.Unlock()
	close(e.stop)
	<-e.done
}

// takeLocked moves id's pending edit in flight.
func (e *Editor[C]) takeLocked(id string, it *item[C]) (C, bool) {
	for i, q := range e.queue {
		if q == id {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			break
		}
	}
	c, urgent := it.c, it.urgent
	var zero C
	it.c, it.pending, it.urgent, it.busy, it.busyUrg, it.held = zero, false, false, true, urgent, time.Time{}
	e.threads[it.thread] = true
	return c, urgent
}

// sendOne sends a taken edit and records how it went; a failure is put
// back (unless superseded) when Retry allows.
func (e *Editor[C]) sendOne(ctx context.Context, id string, it *item[C], c C, urgent bool) error {
	err := e.send(ctx, id, c)
	e.mu.Lock()
	defer e.mu.Unlock()
	it.busy, it.busyUrg = false, false
	delete(e.threads, it.thread)
	e.inUse--
	it.last = e.cfg.Clock.Now()
	if err != nil {
		e.cfg.Failed(id, err)
		it.tries++
		if !it.pending && e.cfg.Retry(err) && (e.cfg.Tries <= 0 || it.tries < e.cfg.Tries) {
			it.c, it.pending, it.urgent = c, true, urgent
			e.queue = append(e.queue, id)
		}
	} else {
		e.sent++
	}
	close(e.changed)
	e.changed = make(chan struct{})
	e.poke()
	return err
}

// run is the owner goroutine: it dispatches due edits until Close, then
// drains.
func (e *Editor[C]) run() {
	defer close(e.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for {
		next := e.dispatch(ctx, &wg, false)
		var timer <-chan time.Time
		if next > 0 {
			timer = e.cfg.Clock.After(next)
		}
		select {
		case <-e.stop:
			e.drain(ctx, cancel, &wg)
			return
		case <-e.wake:
		case <-timer:
		}
	}
}

// drain sends everything pending, ignoring the interval, until nothing is
// or Config.Drain has passed; then sends in flight are cancelled.
func (e *Editor[C]) drain(ctx context.Context, cancel context.CancelFunc, wg *sync.WaitGroup) {
	deadline := time.After(e.cfg.Drain)
	for {
		e.dispatch(ctx, wg, true)
		if e.Pending() == 0 {
			break
		}
		select {
		case <-deadline:
			cancel()
			wg.Wait()
			return
		case <-e.wake:
		case <-time.After(50 * time.Millisecond):
		}
	}
	wg.Wait()
}

// dispatch starts the sends that are due and returns how long until the
// next paced one is (0: none waits).
func (e *Editor[C]) dispatch(ctx context.Context, wg *sync.WaitGroup, force bool) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Clock.Now()
	var next time.Duration
	for i := 0; i < len(e.queue) && e.inUse < e.cfg.Senders; {
		id := e.queue[i]
		it := e.items[id]
		if it.busy || e.threads[it.thread] {
			i++
			continue
		}
		if wait := it.held.Sub(now); wait > 0 && !force {
			if next == 0 || wait < next {
				next = wait
			}
			i++
			continue
		}
		if wait := it.last.Add(e.cfg.Interval).Sub(now); wait > 0 && !it.urgent && !force {
			if next == 0 || wait < next {
				next = wait
			}
			i++
			continue
		}
		c, urgent := e.takeLocked(id, it) // removes queue[i]
		e.inUse++
		wg.Go(func() { _ = e.sendOne(ctx, id, it, c, urgent) })
	}
	e.sweepLocked(now)
	return next
}

// sweepLocked forgets the messages that nothing paces any more (nothing
// pending or in flight, last sent an interval ago or more): an id not
// held is due, like one sent long ago. Amortised: it runs when the map
// has doubled since the last sweep, or an interval after it.
func (e *Editor[C]) sweepLocked(now time.Time) {
	if len(e.items) < e.sweepAt && (len(e.items) < minSweep || now.Sub(e.swept) < e.cfg.Interval) {
		return
	}
	e.swept = now
	for id, it := range e.items {
		if !it.pending && !it.busy && now.Sub(it.last) >= e.cfg.Interval {
			delete(e.items, id)
		}
	}
	e.sweepAt = max(minSweep, 2*len(e.items))
}
