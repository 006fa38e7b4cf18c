package settings

import (
	"slices"
	"sync"
)

// checks are the value checks the bot's parts add (Resolver.Check).
type checks struct {
	mu sync.RWMutex
	by map[Name]func(value string) error
}

// Check adds a check of n's values that only the bot's parts can make (an
// MCP server the servers file lists; an image where the runner has one):
// CheckChat refuses a value f refuses, saying f's error, and CheckFile a
// settings file giving one (the Watcher then keeps the last good file).
// Call it before any chat change and before the file is watched.
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

// CheckFile is what the parts' checks (Check) find wrong in the values of
// a settings file, each with its line.
func (r *Resolver) CheckFile(l Layer) Problems {
	var ps Problems
	for _, at := range l.values {
		for n, v := range at {
			if err := r.checkValue(n, v.Text); err != nil {
				ps = append(ps, Problem{Line: v.Source.Line, Msg: err.Error()})
			}
		}
	}
	slices.SortFunc(ps, func(a, b Problem) int { return a.Line - b.Line })
	return ps
}
