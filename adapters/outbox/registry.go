package outbox

import (
	"container/list"
	"sync"
	"time"
)

// Registry is a map that keeps at most Cap entries, forgetting the least
// recently used, and (with a TTL) forgetting what was not used for that
// long: what an adapter remembers per message, prompt and thread must not
// grow for the life of the process. Safe for concurrent use.
type Registry[K comparable, V any] struct {
	mu    sync.Mutex
	cap   int
	ttl   time.Duration // 0: none
	now   func() time.Time
	order *list.List // of *entry, most recently used first
	items map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	used time.Time
}

// NewRegistry makes a registry of at most capacity entries (at least 1);
// with ttl > 0 an entry not used for ttl is forgotten. now is the clock
// (nil: time.Now).
func NewRegistry[K comparable, V any](capacity int, ttl time.Duration, now func() time.Time) *Registry[K, V] {
	if now == nil {
		now = time.Now
	}
	return &Registry[K, V]{cap: max(1, capacity), ttl: ttl, now: now, order: list.New(), items: make(map[K]*list.Element)}
}

// Get returns the value of k and marks it used.
func (r *Registry[K, V]) Get(k K) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.expireLocked(now)
	el, ok := r.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*entry[K, V])
	e.used = now
	r.order.MoveToFront(el)
	return e.val, true
}

// Put sets k to v and marks it used, forgetting the least recently used
// entries past the capacity.
func (r *Registry[K, V]) Put(k K, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.expireLocked(now)
	if el, ok := r.items[k]; ok {
		e := el.Value.(*entry[K, V])
		e.val, e.used = v, now
		r.order.MoveToFront(el)
		return
	}
	r.items[k] = r.order.PushFront(&entry[K, V]{key: k, val: v, used: now})
	for r.order.Len() > r.cap {
		r.removeLocked(r.order.Back())
	}
}

// Remove forgets k.
func (r *Registry[K, V]) Remove(k K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.items[k]; ok {
		r.removeLocked(el)
	}
}

// RemoveIf forgets k if drop says its current value is the one to forget
// (a message that changes no more, unless it was replaced meanwhile).
func (r *Registry[K, V]) RemoveIf(k K, drop func(V) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	el, ok := r.items[k]
	if !ok || !drop(el.Value.(*entry[K, V]).val) {
		return false
	}
	r.removeLocked(el)
	return true
}

// Len is how many entries are kept (expired ones may still count until
// the next Get or Put).
func (r *Registry[K, V]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.order.Len()
}

// SetCap changes the capacity (tests reach the bound sooner).
func (r *Registry[K, V]) SetCap(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cap = max(1, n)
	for r.order.Len() > r.cap {
		r.removeLocked(r.order.Back())
	}
}

func (r *Registry[K, V]) removeLocked(el *list.Element) {
	r.order.Remove(el)
	delete(r.items, el.Value.(*entry[K, V]).key)
}

// expireLocked forgets, oldest first, the entries unused for the TTL.
func (r *Registry[K, V]) expireLocked(now time.Time) {
	if r.ttl <= 0 {
		return
	}
	for el := r.order.Back(); el != nil; el = r.order.Back() {
		if now.Sub(el.Value.(*entry[K, V]).used) < r.ttl {
			return
		}
		r.removeLocked(el)
	}
}
