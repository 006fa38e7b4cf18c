package outbox

import "github.com/claudeops/claudeops/adapters"

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
