package outbox

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Registry is a map that keeps at most Cap entries, forgetting the least
// recently used, and (with a TTL) forgetting what was not used for that
// long: what an adapter remembers per message, prompt and thread must not
// grow for the life of the process. Safe for concurrent use.
//
// The LRU is golang-lru's simplelru, under one lock with the TTL so that
// a look-up and its expiry are one step. Its expirable cache (v2.0.7) was
// measured and not taken: its TTL runs from the last write, not the last
// use (TestRegistry's "unused entries expire" fails with it); it reads the
// wall clock, so no test can move its time; and a cache with a TTL starts
// a goroutine that never ends (no Close), each cache holding 100 expiry
// buckets even empty: 9.2 KB and a goroutine where simplelru takes 0.2 KB
// (docs/PERFORMANCE.md, "Libraries").
//
// The LRU holds each value as an any (a *kept[V], so no allocation of its
// own): every registry is then one instance of simplelru's generic code,
// where a type per value made one each, 205 KB more in the stripped
// binary.
type Registry[K comparable, V any] struct {
	mu  sync.Mutex
	lru *simplelru.LRU[K, any]
	ttl time.Duration // 0: none
	now func() time.Time
	// born is when the registry was made: uses are kept as the time
	// since, 8 bytes where a time.Time takes 24, with the monotonic
	// reading of now when it has one.
	born time.Time
}

type kept[V any] struct {
	val  V
	used time.Duration // since born, at the last Get or Put; set only with a TTL
}

// NewRegistry makes a registry of at most capacity entries (at least 1);
// with ttl > 0 an entry not used for ttl is forgotten. now is the clock
// (nil: time.Now).
func NewRegistry[K comparable, V any](capacity int, ttl time.Duration, now func() time.Time) *Registry[K, V] {
	if now == nil {
		now = time.Now
	}
	lru, _ := simplelru.NewLRU[K, any](max(1, capacity), nil) // fails only for a size below 1
	return &Registry[K, V]{lru: lru, ttl: max(0, ttl), now: now, born: now()}
}

// Get returns the value of k and marks it used.
func (r *Registry[K, V]) Get(k K) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.expireLocked()
	v, ok := r.lru.Get(k)
	if !ok {
		var zero V
		return zero, false
	}
	it := v.(*kept[V])
	it.used = now
	return it.val, true
}

// Put sets k to v and marks it used, forgetting the least recently used
// entries past the capacity.
func (r *Registry[K, V]) Put(k K, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.expireLocked()
	if it, ok := r.lru.Get(k); ok {
		*it.(*kept[V]) = kept[V]{val: v, used: now}
		return
	}
	r.lru.Add(k, &kept[V]{val: v, used: now})
}

// Remove forgets k.
func (r *Registry[K, V]) Remove(k K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lru.Remove(k)
}

// RemoveIf forgets k if drop says its current value is the one to forget
// (a message that changes no more, unless it was replaced meanwhile).
func (r *Registry[K, V]) RemoveIf(k K, drop func(V) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	it, ok := r.lru.Peek(k)
	if !ok || !drop(it.(*kept[V]).val) {
		return false
	}
	return r.lru.Remove(k)
}

// Len is how many entries are kept (expired ones may still count until
// the next Get or Put).
func (r *Registry[K, V]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Len()
}

// SetCap changes the capacity (tests reach the bound sooner).
func (r *Registry[K, V]) SetCap(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lru.Resize(max(1, n))
}

// expireLocked forgets, oldest first, the entries unused for the TTL, and
// returns the time it went by, since born (0 without a TTL: the clock is
// not read). Every use moves an entry to the front, so the oldest is the
// least recently used.
func (r *Registry[K, V]) expireLocked() time.Duration {
	if r.ttl == 0 {
		return 0
	}
	now := r.now().Sub(r.born)
	for {
		_, it, ok := r.lru.GetOldest()
		if !ok || now-it.(*kept[V]).used < r.ttl {
			return now
		}
		r.lru.RemoveOldest()
	}
}
