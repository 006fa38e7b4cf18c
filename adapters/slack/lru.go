package slack

import "container/list"

// lru is a map that keeps at most max entries, forgetting the least
// recently used: what the adapter remembers per message and per thread
// must not grow for the life of the process. Not safe for concurrent use.
type lru[K comparable, V any] struct {
	max   int
	order *list.List // of *lruEntry, most recent first
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key K
	val V
}

func newLRU[K comparable, V any](max int) *lru[K, V] {
	return &lru[K, V]{max: max, order: list.New(), items: make(map[K]*list.Element)}
}

// get returns the value of k and marks it used.
func (l *lru[K, V]) get(k K) (V, bool) {
	el, ok := l.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	l.order.MoveToFront(el)
	return el.Value.(*lruEntry[K, V]).val, true
}

// put sets k to v, forgetting the least recently used entry when full.
func (l *lru[K, V]) put(k K, v V) {
	if el, ok := l.items[k]; ok {
		el.Value.(*lruEntry[K, V]).val = v
		l.order.MoveToFront(el)
		return
	}
	l.items[k] = l.order.PushFront(&lruEntry[K, V]{key: k, val: v})
	for l.order.Len() > l.max {
		old := l.order.Back()
		l.order.Remove(old)
		delete(l.items, old.Value.(*lruEntry[K, V]).key)
	}
}

// remove forgets k.
func (l *lru[K, V]) remove(k K) {
	if el, ok := l.items[k]; ok {
		l.order.Remove(el)
		delete(l.items, k)
	}
}

func (l *lru[K, V]) len() int { return l.order.Len() }
