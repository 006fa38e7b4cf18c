package health

import (
	"context"
	"sync"
	"time"
)

// probe runs a check, one run at a time, each in a goroutine of its own
// bounded by limit (and ended when base ends), and keeps the latest
// result for fresh. Callers wait for a run only as long as their ctx
// allows, so a check that hangs (a database stuck in SQLite's busy wait)
// holds no request and never piles up runs.
type probe[T any] struct {
	check func(context.Context) T
	fresh time.Duration // a result younger than this is reused
	limit time.Duration // bound of one run
	now   func() time.Time
	base  context.Context

	mu      sync.Mutex
	last    T
	at      time.Time     // when last was taken; zero: no result yet
	stale   bool          // last is not to be reused: run again (expire)
	running chan struct{} // closed when the run in flight ends; nil: none
}

// seed makes r, taken at at, the latest result (the start's own check).
func (p *probe[T]) seed(r T, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last, p.at = r, at
}

// get returns a result younger than fresh, starting a run when there is
// none, and ok. When the run does not end before ctx, it returns the
// latest result, older (zero at: none), and !ok; the run goes on.
func (p *probe[T]) get(ctx context.Context) (r T, at time.Time, ok bool) {
	p.mu.Lock()
	if !p.at.IsZero() && !p.stale && p.now().Sub(p.at) < p.fresh {
		defer p.mu.Unlock()
		return p.last, p.at, true
	}
	done := p.running
	if done == nil {
		done = make(chan struct{})
		p.running = done
		go p.run(done)
	}
	p.mu.Unlock()
	select {
	case <-done:
		ok = true
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last, p.at, ok
}

// expire makes the next get run the check again, whatever the latest
// result's age; until that run ends, the latest result still serves.
func (p *probe[T]) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stale = true
}

func (p *probe[T]) run(done chan struct{}) {
	ctx, cancel := context.WithTimeout(p.base, p.limit)
	defer cancel()
	r := p.check(ctx)
	p.mu.Lock()
	p.last, p.at, p.running, p.stale = r, p.now(), nil, false
	p.mu.Unlock()
	close(done)
}
