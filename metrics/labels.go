package metrics

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Caps on the values a label takes. The callers pass small fixed sets
// (results, kinds, API method names) and channel ids; a cap makes the
// bound a property of this package rather than a promise of every caller.
const (
	maxValues  = 16  // a label of a fixed set: results, kinds, statuses, platforms
	maxMethods = 64  // API methods, over all platforms
	maxLen     = 128 // bytes of one label value
	// Other is the value that stands for every value past a cap.
	Other = "other"
	// Unknown stands for an empty value (Prometheus reads an empty value
	// as the label being absent).
	Unknown = "unknown"
)

// capped admits the first max distinct values of a label; later ones read
// Other. It never forgets a value: a series once exported keeps its name,
// so rates over it stay true. Safe for concurrent use.
type capped struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newCapped(max int) *capped { return &capped{max: max, seen: make(map[string]struct{})} }

// value is v as the label shows it: valid UTF-8, at most maxLen bytes,
// Unknown for "", Other past the cap.
func (c *capped) value(v string) string {
	v = clean(v)
	if v == Other {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return Other
	}
	c.seen[v] = struct{}{}
	return v
}

// pair is like value for two labels counted together (platform and
// channel): the first max distinct pairs keep their second value, later
// ones read Other in it.
func (c *capped) pair(a, b string) (string, string) {
	a, b = clean(a), clean(b)
	if b == Other {
		return a, b
	}
	key := a + "\x00" + b
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[key]; ok {
		return a, b
	}
	if len(c.seen) >= c.max {
		return a, Other
	}
	c.seen[key] = struct{}{}
	return a, b
}

// clean makes v a label value the exposition formats carry as given:
// valid UTF-8 (the client library refuses anything else), not empty, not
// longer than maxLen bytes (cut at a rune boundary). Quotes, backslashes
// and newlines stay: the client library escapes them.
func clean(v string) string {
	if v == "" {
		return Unknown
	}
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	if len(v) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	return v
}
