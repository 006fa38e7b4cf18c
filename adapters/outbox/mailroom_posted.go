package outbox

import (
	"strings"

	"github.com/claudeops/claudeops/adapters"
)

// OnPosted has f told, on the lane's goroutine, of each post the platform
// took: the thread and the provisional id Post handed out (a post that
// failed and was made again by a later edit is told when that one is
// made). f is called once Posted reports the post made, and must return
// at once. Call it before the first Post.
func (mr *Mailroom) OnPosted(f func(t adapters.ThreadRef, id string)) { mr.posted = f }

// Posted reports whether the post Post handed out ref for has been made
// (false too once the thread's lane has been forgotten).
func (mr *Mailroom) Posted(ref adapters.MessageRef) bool {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	l := mr.lanes[ref.Thread]
	return l != nil && l.resolved[ref.ID] != ""
}

// Resolve is the platform's ref for ref: ref itself unless Post handed it
// out, else the platform's once the post has been made; ok is false while
// it has not been (or failed, or the thread's lane has been forgotten).
// It never waits: a caller that needs the post made first asks after a
// call that waited its turn in the lane (Ask).
func (mr *Mailroom) Resolve(ref adapters.MessageRef) (adapters.MessageRef, bool) {
	if !strings.HasPrefix(ref.ID, provisional) {
		return ref, true
	}
	mr.mu.Lock()
	defer mr.mu.Unlock()
	l := mr.lanes[ref.Thread]
	if l == nil || l.resolved[ref.ID] == "" {
		return adapters.MessageRef{}, false
	}
	return adapters.MessageRef{Thread: ref.Thread, ID: l.resolved[ref.ID]}, true
}
