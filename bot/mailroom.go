package bot

import (
	"context"

	"github.com/claudeops/claudeops/adapters"
)

// What the bot asks of an adapter that queues its calls (the Slack and
// Matrix adapters embed adapters/outbox's Mailroom; the console is
// immediate and has none of these). Each is optional, and asked of the
// one adapter a thread posts through. What the restart's records ask of
// one (resolver) is with them, in restartlines.go.

// queuer is an adapter whose calls wait in lanes.
type queuer interface {
	// Idle reports whether nothing is queued or being sent (WaitIdle).
	Idle() bool
	// Drain waits until what is queued has been sent, or ctx ends: what
	// the workers said last goes out at shutdown, before the adapters
	// are closed.
	Drain(ctx context.Context) error
	// Forget drops what is kept for a thread whose worker has ended.
	Forget(t adapters.ThreadRef)
}

// postTracker tells when the platform took a post that Post answered with
// a provisional ref (firsttext.go times first texts to it).
type postTracker interface {
	// OnPosted has f told of each post the platform took; set once,
	// before the first Post.
	OnPosted(f func(t adapters.ThreadRef, id string))
	// Posted reports whether the post behind ref has been made.
	Posted(ref adapters.MessageRef) bool
}
