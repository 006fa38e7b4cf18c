package fakeslack

import "sync"

// Hold is a gate on one Web API method: while it is closed, calls of the
// method wait before they are handled, as if Slack were slow. Tests use it
// to check what happens while a call is outstanding, by order, not time.
type Hold struct {
	method  string
	open    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	waiting int
	arrived int
}

// Hold closes the gate on method until Release (or the server's end).
// A method has at most one Hold; a second replaces the first for calls
// arriving after it.
func (s *Server) Hold(method string) *Hold {
	h := &Hold{method: method, open: make(chan struct{})}
	s.mu.Lock()
	if s.holds == nil {
		s.holds = map[string]*Hold{}
	}
	s.holds[method] = h
	s.mu.Unlock()
	s.t.Cleanup(h.Release)
	return h
}

// Release lets the waiting calls (and all later ones) through.
func (h *Hold) Release() { h.once.Do(func() { close(h.open) }) }

// Waiting is how many calls wait at the gate now.
func (h *Hold) Waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting
}

// Arrived is how many calls reached the gate since it was made.
func (h *Hold) Arrived() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.arrived
}

// holdFor waits at method's gate, if any, until it opens or done ends.
func (s *Server) holdFor(method string, done <-chan struct{}) {
	s.mu.Lock()
	h := s.holds[method]
	s.mu.Unlock()
	if h == nil {
		return
	}
	h.mu.Lock()
	h.waiting++
	h.arrived++
	h.mu.Unlock()
	s.mu.Lock()
	s.notifyLocked()
	s.mu.Unlock()
	select {
	case <-h.open:
	case <-done:
	case <-s.ctx.Done():
	}
	h.mu.Lock()
	h.waiting--
	h.mu.Unlock()
}
