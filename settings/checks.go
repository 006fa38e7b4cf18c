package settings

import "sync"

// checks are the value checks the bot's parts add (Resolver.Check).
type checks struct {
	mu sync.RWMutex
	by map[Name]func(value string) error
}

// Check adds a check of n's values that only the bot's parts can make (an
// MCP server the servers file lists; an image where the runner has one):
// CheckChat refuses a value f refuses, saying f's error. The settings
// file's values are not checked by it (the file is checked as a whole,
// without the parts): the part that reads the setting skips what it
// cannot use, logs it and says so. Call it before any chat change.
func (r *Resolver) Check(n Name, f func(value string) error) {
	r.checks.mu.Lock()
	defer r.checks.mu.Unlock()
	if r.checks.by == nil {
		r.checks.by = map[Name]func(string) error{}
	}
	r.checks.by[n] = f
}

// checkValue is n's part-made check of value (canonical; "" is an unset,
// never checked).
func (r *Resolver) checkValue(n Name, value string) error {
	if value == "" {
		return nil
	}
	r.checks.mu.RLock()
	f := r.checks.by[n]
	r.checks.mu.RUnlock()
	if f == nil {
		return nil
	}
	return f(value)
}
