package bot

import (
	"sync"

	"github.com/claudeops/claudeops/claudeproc"
)

// liveSet holds the handles the bot's runner started until their process
// has ended (their Wait has returned).
type liveSet struct {
	mu sync.Mutex
	hs map[*liveHandle]struct{}
}

func newLiveSet() *liveSet { return &liveSet{hs: make(map[*liveHandle]struct{})} }

// track keeps h in the set until its Wait returns.
func (s *liveSet) track(h claudeproc.Handle) claudeproc.Handle {
	lh := &liveHandle{Handle: h, set: s, done: make(chan struct{})}
	s.mu.Lock()
	s.hs[lh] = struct{}{}
	s.mu.Unlock()
	return lh
}

func (s *liveSet) all() []*liveHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*liveHandle, 0, len(s.hs))
	for h := range s.hs {
		out = append(out, h)
	}
	return out
}

// liveHandle is a handle of the set; done is closed once its process has
// ended and its runner has ended what it left.
type liveHandle struct {
	claudeproc.Handle
	set  *liveSet
	done chan struct{}
}

func (h *liveHandle) Wait() (claudeproc.ExitStatus, error) {
	st, err := h.Handle.Wait()
	h.set.mu.Lock()
	delete(h.set.hs, h)
	h.set.mu.Unlock()
	close(h.done)
	return st, err
}

// Pid is the process's id, as claudeproc.Process asks its handle (0 for
// a container's).
func (h *liveHandle) Pid() int {
	if p, ok := h.Handle.(interface{ Pid() int }); ok {
		return p.Pid()
	}
	return 0
}
