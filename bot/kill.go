package bot

import (
	"context"
	"fmt"
	"sync"
	"syscall"

	"github.com/claudeops/claudeops/claudeproc"
)

// Kill is the forced exit's end of the sessions (cmd's second Ctrl-C): no
// turn is interrupted, nothing recorded, drained or told. Each session's
// process not seen ending yet gets SIGKILL through its runner (the whole
// session: a local CLI's process group and every process under it, the
// sandbox, the container, the Pod), and Kill waits until each runner has
// seen its end (a local session's keeper ended and reaped with it, a
// container removed, a Pod deleted) or ctx ends. It returns how many it
// killed, and an error naming those still not ended when ctx ended. A
// process whose start is still under way is not seen: the local runners
// end it with the bot (parent-death signal, keeper), the others at the
// next start. The next start also settles what the killed turns left
// (Recover).
func (b *Bot) Kill(ctx context.Context) (int, error) {
	hs := b.live.all()
	for _, h := range hs {
		if err := h.Signal(syscall.SIGKILL); err != nil {
			b.log.Warn("kill a session", "claude", h.Name(), "err", err)
		}
	}
	var left []string
	for _, h := range hs {
		select {
		case <-h.done:
		case <-ctx.Done():
			left = append(left, h.Name())
		}
	}
	if len(left) > 0 {
		return len(hs), fmt.Errorf("sessions not seen ending: %v: %w", left, context.Cause(ctx))
	}
	return len(hs), nil
}

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
