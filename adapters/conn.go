package adapters

import (
	"sync"
	"time"
)

// ConnState is where an adapter's link to its platform stands.
type ConnState string

const (
	// Connecting: not connected yet (starting), or reconnecting because
	// the platform asked to.
	Connecting ConnState = "connecting"
	// Connected: events from the platform can arrive.
	Connected ConnState = "connected"
	// Disconnected: the link was lost or refused (LastError says why), or
	// the adapter has stopped. A running adapter keeps retrying.
	Disconnected ConnState = "disconnected"
)

// ConnStatus is an adapter's link to its platform as the adapter's own
// connection loop last reported it.
type ConnStatus struct {
	State ConnState
	Since time.Time // when State last changed
	// Via is how the adapter reaches its platform ("socket mode", "http",
	// "sync", "terminal").
	Via string
	// LastError is the link's latest failure, one line, "" if none yet;
	// it stays after a recovery, with LastErrorAt, to say what happened.
	LastError   string
	LastErrorAt time.Time
}

// ConnReporter is optional: an adapter that says how its link to the
// platform stands (the bot's readiness, /readyz). The status is set by the
// adapter's own connection loop as it connects, loses and regains the
// platform, never inferred from elsewhere. ConnStatus is safe for
// concurrent use and does not block.
type ConnReporter interface {
	ConnStatus() ConnStatus
}

// maxConnError bounds LastError: a status is a line, not a log.
const maxConnError = 300

// ConnTracker keeps a ConnStatus for an adapter's connection loop. It is
// safe for concurrent use.
type ConnTracker struct {
	now func() time.Time
	mu  sync.Mutex
	st  ConnStatus
}

// NewConnTracker starts in Connecting; now is the clock (nil: time.Now).
func NewConnTracker(via string, now func() time.Time) *ConnTracker {
	if now == nil {
		now = time.Now
	}
	return &ConnTracker{now: now, st: ConnStatus{State: Connecting, Since: now(), Via: via}}
}

// Set records the loop's news: the state (Since moves only when it
// changes) and, when err is not nil, the failure.
func (t *ConnTracker) Set(s ConnState, err error) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if s != t.st.State {
		t.st.State, t.st.Since = s, now
	}
	if err != nil {
		t.st.LastError, t.st.LastErrorAt = Cut(FirstLine(err.Error()), maxConnError), now
	}
}

// State is the current state.
func (t *ConnTracker) State() ConnState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.State
}

// Status is a copy of the status.
func (t *ConnTracker) Status() ConnStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st
}
