package outbox

import (
	"fmt"
	"testing"
	"time"
)

func TestRegistry(t *testing.T) {
	type step struct {
		op    string // put, get, remove, removeIf, advance
		key   string
		val   int
		found bool // get: whether the key is there
	}
	cases := []struct {
		name  string
		cap   int
		ttl   time.Duration
		steps []step
		len   int
	}{
		{"keeps up to its capacity", 2, 0, []step{
			{op: "put", key: "a", val: 1}, {op: "put", key: "b", val: 2}, {op: "put", key: "c", val: 3},
			{op: "get", key: "a"}, {op: "get", key: "b", val: 2, found: true}, {op: "get", key: "c", val: 3, found: true},
		}, 2},
		{"a use saves an entry from eviction", 2, 0, []step{
			{op: "put", key: "a", val: 1}, {op: "put", key: "b", val: 2}, {op: "get", key: "a", val: 1, found: true},
			{op: "put", key: "c", val: 3}, {op: "get", key: "b"}, {op: "get", key: "a", val: 1, found: true},
		}, 2},
		{"put replaces", 2, 0, []step{
			{op: "put", key: "a", val: 1}, {op: "put", key: "a", val: 5}, {op: "get", key: "a", val: 5, found: true},
		}, 1},
		{"remove and removeIf", 4, 0, []step{
			{op: "put", key: "a", val: 1}, {op: "put", key: "b", val: 2}, {op: "remove", key: "a"},
			{op: "removeIf", key: "b", val: 9}, {op: "get", key: "b", val: 2, found: true},
			{op: "removeIf", key: "b", val: 2}, {op: "get", key: "b"},
		}, 0},
		{"unused entries expire", 10, time.Minute, []step{
			{op: "put", key: "a", val: 1}, {op: "advance", val: 40}, {op: "put", key: "b", val: 2},
			{op: "advance", val: 40}, {op: "get", key: "a"}, {op: "get", key: "b", val: 2, found: true},
			{op: "advance", val: 59}, {op: "get", key: "b", val: 2, found: true},
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock()
			r := NewRegistry[string, int](c.cap, c.ttl, clk.Now)
			for i, s := range c.steps {
				switch s.op {
				case "put":
					r.Put(s.key, s.val)
				case "get":
					v, ok := r.Get(s.key)
					if ok != s.found || ok && v != s.val {
						t.Fatalf("step %d: get %s = %d, %v; want %d, %v", i, s.key, v, ok, s.val, s.found)
					}
				case "remove":
					r.Remove(s.key)
				case "removeIf":
					r.RemoveIf(s.key, func(v int) bool { return v == s.val })
				case "advance":
					clk.Advance(time.Duration(s.val) * time.Second)
				}
			}
			if r.Len() != c.len {
				t.Errorf("len %d, want %d", r.Len(), c.len)
			}
		})
	}
}

func TestRegistryBoundUnderChurn(t *testing.T) {
	r := NewRegistry[string, []byte](100, 0, nil)
	for i := range 100_000 {
		r.Put(fmt.Sprint(i), make([]byte, 16))
	}
	if r.Len() != 100 {
		t.Fatalf("len %d", r.Len())
	}
	r.SetCap(10)
	if r.Len() != 10 {
		t.Fatalf("len %d after SetCap(10)", r.Len())
	}
	if _, ok := r.Get("99999"); !ok {
		t.Error("the most recent entry was forgotten")
	}
}

// BenchmarkRegistry: what an adapter pays to remember a message and to
// look it up again, at the adapters' capacity (4,096): a new key (each
// evicts the least recently used), a key already there, a hit; with and
// without a TTL.
func BenchmarkRegistry(b *testing.B) {
	const capacity = 4096
	keys := make([]string, 2*capacity)
	for i := range keys {
		keys[i] = fmt.Sprintf("C0GENERAL1/1700000000.%06d", i)
	}
	ops := []struct {
		name string
		op   func(r *Registry[string, int], i int)
	}{
		{"put new", func(r *Registry[string, int], i int) { r.Put(keys[i%len(keys)], i) }},
		{"put again", func(r *Registry[string, int], i int) { r.Put(keys[i%capacity], i) }},
		{"get", func(r *Registry[string, int], i int) { r.Get(keys[i%capacity]) }},
	}
	for _, ttl := range []time.Duration{0, time.Hour} {
		for _, o := range ops {
			b.Run(fmt.Sprintf("ttl=%v/%s", ttl, o.name), func(b *testing.B) {
				r := NewRegistry[string, int](capacity, ttl, nil)
				for i := range capacity {
					r.Put(keys[i], i)
				}
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					o.op(r, i)
				}
			})
		}
	}
}
