package bot

import (
	"context"
	"sync"
	"time"
)

// slots caps live claude processes. A thread holds a slot while its process
// lives. When all are taken, the least recently used idle holder is asked to
// give its slot back (its process is stopped; the thread resumes later);
// when none is idle, threads wait in a FIFO queue and are told their place.
// A thread whose slot is on its way (an idle holder is giving one back for
// it) is told nothing: only waiting on busy sessions is announced.
//
// Each holder and waiter is attributed to the user whose message made the
// thread take (or wait for) its slot, as admit recorded it; that is what
// CLAUDEOPS_MAX_THREADS_PER_USER counts (see quota.go), and a user whose
// threads wait is told so once, not once per thread.
type slots struct {
	mu      sync.Mutex
	max     int
	now     func() time.Time
	held    map[string]*slot
	waiting []*slotWaiter

	// intents: by thread key, who the thread's next acquire is for
	// (recorded by admit just before).
	intents map[string]slotIntent
	// waitingBy counts each user's waiting threads; noticed: the user was
	// told their threads queue, and is not told again while any waits.
	waitingBy map[string]int
	noticed   map[string]bool
	// refusedAt: when a user was last told of the per-user limit.
	refusedAt map[string]time.Time
}

// slotIntent attributes a thread's next acquire to user; counted: it
// counts toward the user's limit (false for admins).
type slotIntent struct {
	user    string
	counted bool
	at      time.Time
}

type slot struct {
	key      string
	user     string
	counted  bool
	lastUsed time.Time
	busy     bool
	evicting bool
	// evict asks the holder to stop its process and release the slot.
	evict func()
}

type slotWaiter struct {
	key     string
	user    string
	counted bool
	ready   chan struct{}
	// stuck is closed once no eviction in progress covers this waiter: it
	// waits on busy sessions. pos is its place in the queue then.
	stuck chan struct{}
	pos   int
}

func newSlots(max int, now func() time.Time) *slots {
	return &slots{
		max: max, now: now, held: make(map[string]*slot),
		intents: make(map[string]slotIntent), waitingBy: make(map[string]int),
		noticed: make(map[string]bool), refusedAt: make(map[string]time.Time),
	}
}

func (s *slots) live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

func (s *slots) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)
}

// acquire takes a slot for key, evicting an idle holder if the cap is
// reached, or waiting. onQueued is called (without the lock) with the
// thread's place in the queue when it has to wait on busy sessions (not
// when an idle holder is giving a slot back for it), unless the user it is
// attributed to already has a thread waiting (one notice per user, not per
// thread). evict is how this holder is asked to give the slot back later.
func (s *slots) acquire(ctx context.Context, key string, evict func(), onQueued func(pos int)) error {
	s.mu.Lock()
	in, ok := s.intents[key]
	delete(s.intents, key)
	if !ok || s.now().Sub(in.at) > intentTTL {
		in = slotIntent{} // unattributed: scheduled runs, resumes after a failure
	}
	if sl := s.held[key]; sl != nil {
		sl.lastUsed = s.now()
		s.mu.Unlock()
		return nil
	}
	if len(s.held) < s.max && len(s.waiting) == 0 {
		s.take(key, in, evict)
		s.mu.Unlock()
		return nil
	}
	w := &slotWaiter{key: key, user: in.user, counted: in.counted, ready: make(chan struct{}), stuck: make(chan struct{})}
	s.waiting = append(s.waiting, w)
	if in.user != "" {
		s.waitingBy[in.user]++
	}
	s.evictIdle()
	s.mu.Unlock()

	stuck := w.stuck
	for {
		select {
		case <-w.ready:
			s.mu.Lock()
			s.take(key, in, evict)
			s.mu.Unlock()
			return nil
		case <-stuck:
			stuck = nil // told at most once
			if onQueued != nil && s.claimNotice(w) {
				onQueued(w.pos)
			}
		case <-ctx.Done():
			s.giveUp(w)
			return ctx.Err()
		}
	}
}

// giveUp: w stops waiting (its context ended).
func (s *slots) giveUp(w *slotWaiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-w.ready:
		// Handed a slot as we gave up: pass it on.
		delete(s.held, w.key)
		s.grant()
	default:
		for i, x := range s.waiting {
			if x == w {
				s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
				s.leftQueue(w)
				break
			}
		}
	}
}

// claimNotice reports whether w, which has just queued, is to be announced:
// not if it already has its slot, nor if its user was told of another of
// their threads that still waits (one notice per user, not per thread).
// Unattributed waiters (scheduled runs) are always announced.
func (s *slots) claimNotice(w *slotWaiter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile (ready is closed under the lock)
		return false
	default:
	}
	if w.user == "" {
		return true
	}
	if s.noticed[w.user] {
		return false
	}
	s.noticed[w.user] = true
	return true
}

// take must be called with the lock held.
func (s *slots) take(key string, in slotIntent, evict func()) {
	s.held[key] = &slot{key: key, user: in.user, counted: in.counted, lastUsed: s.now(), evict: evict}
}

// leftQueue: w no longer waits. Called with the lock held.
func (s *slots) leftQueue(w *slotWaiter) {
	if w.user == "" {
		return
	}
	if s.waitingBy[w.user]--; s.waitingBy[w.user] <= 0 {
		delete(s.waitingBy, w.user)
		delete(s.noticed, w.user) // a later wait is told again
	}
}

// evictIdle asks idle holders, least recently used first, to give their
// slots back, one per waiter; then marks the waiters no eviction covers as
// stuck. Called with the lock held.
func (s *slots) evictIdle() {
	evicting := 0
	for _, sl := range s.held {
		if sl.evicting {
			evicting++
		}
	}
	for evicting < len(s.waiting) {
		lru := s.idleLRU()
		if lru == nil {
			break
		}
		lru.evicting = true
		evicting++
		go lru.evict() // the holder takes its own locks
	}
	s.markStuck(evicting)
}

// idleLRU is the least recently used idle holder not yet giving its slot
// back, or nil. Called with the lock held.
func (s *slots) idleLRU() *slot {
	var lru *slot
	for _, sl := range s.held {
		if sl.busy || sl.evicting {
			continue
		}
		if lru == nil || sl.lastUsed.Before(lru.lastUsed) {
			lru = sl
		}
	}
	return lru
}

// markStuck: slots given back go to the queue in order, so the first
// evicting waiters have theirs on the way; the rest wait on busy sessions
// and are told so (once). Called with the lock held.
func (s *slots) markStuck(evicting int) {
	for i := evicting; i < len(s.waiting); i++ {
		w := s.waiting[i]
		select {
		case <-w.stuck:
		default:
			w.pos = i + 1
			close(w.stuck)
		}
	}
}

// release gives key's slot back and hands it to the first waiter.
func (s *slots) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.held[key]; !ok {
		return
	}
	delete(s.held, key)
	s.grant()
}

// grant hands free capacity to waiters. Called with the lock held.
func (s *slots) grant() {
	for len(s.waiting) > 0 && len(s.held) < s.max {
		w := s.waiting[0]
		s.waiting = s.waiting[1:]
		s.leftQueue(w)
		close(w.ready)
		// Reserve its place until it takes the slot.
		s.held[w.key] = &slot{key: w.key, user: w.user, counted: w.counted, lastUsed: s.now(), busy: true, evict: func() {}}
	}
	s.evictIdle()
}

// setBusy marks a holder busy (a turn runs, an approval waits) or idle
// (evictable); idle holders are candidates for waiting threads.
func (s *slots) setBusy(key string, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := s.held[key]
	if sl == nil {
		return
	}
	sl.busy = busy
	sl.lastUsed = s.now()
	if !busy {
		s.evictIdle()
	}
}

// keep: a holder asked to give its slot back could not (work arrived
// first). It stays, busy, and another idle holder is asked instead.
func (s *slots) keep(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sl := s.held[key]; sl != nil {
		sl.evicting = false
		sl.busy = true
	}
	s.evictIdle()
}
