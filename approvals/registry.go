package approvals

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// State is where a pending request is in its life.
type State string

// States. Only StatePending can change, and only once.
const (
	StatePending   State = "pending"
	StateAllowed   State = "allowed"
	StateDenied    State = "denied"
	StateExpired   State = "expired"   // timed out, or its process went away
	StateCancelled State = "cancelled" // the CLI sent control_cancel_request
)

// Request is one can_use_tool control request waiting for a person.
type Request struct {
	ID         string // opaque approval id carried by buttons; Add sets a random one when empty
	RequestID  string // the CLI's request_id, for the control_response and control_cancel_request
	ThreadKey  string
	ChannelKey string
	Starter    string // who started the thread: may decide, as may admins
	Tool       string
	Input      json.RawMessage
	ToolUseID  string
	Question   bool // AskUserQuestion: decided by answers, not by a permission choice
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: never
}

// Decision is a person's answer to a request.
type Decision struct {
	Choice  Choice
	Reason  string            // deny: shown to the model
	Answers map[string]string // AskUserQuestion: question text -> answer
	By      string            // the deciding user's immutable id
	At      time.Time         // Decide sets it when zero
}

// Pending is a request and what became of it.
type Pending struct {
	Request
	State    State
	Decision Decision // set when State is StateAllowed or StateDenied
}

func (p Pending) clone() Pending {
	if p.Input != nil {
		p.Input = json.RawMessage(bytes.Clone(p.Input))
	}
	p.Decision.Answers = maps.Clone(p.Decision.Answers)
	return p
}

type entry struct {
	p   Pending
	seq uint64 // insertion order, to break CreatedAt ties
}

// Registry holds pending requests by approval id and by the CLI's
// request_id, and decides who may answer them. It does no I/O: persisting a
// request before asking, and restoring it after a restart, are the caller's.
// All methods are safe for concurrent use, never block on anything but the
// registry's mutex, and return copies.
type Registry struct {
	mu sync.Mutex
	// admin says whether user administers a channel (by its key).
	admin   func(channelKey, user string) bool
	timeout time.Duration
	now     func() time.Time
	byID    map[string]*entry
	byReq   map[string]string // request_id -> approval id
	seq     uint64
}

// NewRegistry returns an empty registry. admins may decide any request
// of every channel; timeout is how long a request waits (<= 0: forever);
// now is the clock (nil: time.Now).
func NewRegistry(admins []string, timeout time.Duration, now func() time.Time) *Registry {
	return NewChannelRegistry(ListAdmins(admins), timeout, now)
}

// NewChannelRegistry is NewRegistry where who administers is asked per
// channel: admin(channelKey, user) says whether user administers the
// channel (Request.ChannelKey) — a request is decided by its own
// channel's admins, never another's. admin must be safe from any
// goroutine and must not call the registry.
func NewChannelRegistry(admin func(channelKey, user string) bool, timeout time.Duration, now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{
		admin:   admin,
		timeout: timeout,
		now:     now,
		byID:    make(map[string]*entry),
		byReq:   make(map[string]string),
	}
}

// ListAdmins is an admin check for NewChannelRegistry from one list for
// every channel: ids, or globs (`@*:example.org`, as path.Match reads them).
func ListAdmins(admins []string) func(channelKey, user string) bool {
	set := make(map[string]bool, len(admins))
	for _, a := range admins {
		if a = strings.TrimSpace(a); a != "" {
			set[a] = true
		}
	}
	return func(_, user string) bool {
		if set[user] {
			return true
		}
		for a := range set {
			if strings.ContainsAny(a, "*?[") {
				if ok, _ := path.Match(a, user); ok {
					return true
				}
			}
		}
		return false
	}
}

// MayDecide reports whether user may decide a request of channelKey's
// thread started by starter: the starter and the channel's admins may;
// an empty user never may.
func (r *Registry) MayDecide(channelKey, user, starter string) bool {
	if user == "" {
		return false
	}
	return user == starter || r.IsAdmin(channelKey, user)
}

// IsAdmin reports whether user administers the channel channelKey.
func (r *Registry) IsAdmin(channelKey, user string) bool {
	return user != "" && r.admin(channelKey, user)
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

// put stores p; the caller holds mu.
func (r *Registry) put(p Pending) {
	if old, ok := r.byID[p.ID]; ok && r.byReq[old.p.RequestID] == p.ID {
		delete(r.byReq, old.p.RequestID)
	}
	r.seq++
	r.byID[p.ID] = &entry{p: p.clone(), seq: r.seq}
	if p.RequestID != "" {
		r.byReq[p.RequestID] = p.ID
	}
}

// Add registers a new pending request and returns a copy of it. It sets ID
// when empty, CreatedAt to now when zero, and ExpiresAt to now + timeout
// when zero (and the timeout is positive). Adding an ID that is already
// known changes nothing and returns the existing entry, whatever its state:
// a redelivered request is not asked twice, and a decided one is not
// reopened.
func (r *Registry) Add(req Request) *Pending {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.ID != "" {
		if e, ok := r.byID[req.ID]; ok {
			p := e.p.clone()
			return &p
		}
	} else {
		for req.ID == "" || r.byID[req.ID] != nil {
			req.ID = newID()
		}
	}
	now := r.now()
	if req.CreatedAt.IsZero() {
		req.CreatedAt = now
	}
	if req.ExpiresAt.IsZero() && r.timeout > 0 {
		req.ExpiresAt = now.Add(r.timeout)
	}
	p := Pending{Request: req, State: StatePending}
	r.put(p)
	p = p.clone()
	return &p
}

// Restore puts back an entry loaded from storage, as it was (an empty State
// reads as pending, an empty ID gets a random one), replacing any entry with
// the same ID. A restored pending request past its ExpiresAt expires on the
// next Expire or Decide.
func (r *Registry) Restore(p Pending) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p.ID == "" {
		p.ID = newID()
		if r.byID[p.ID] != nil {
			p.ID = ""
		}
	}
	if p.State == "" {
		p.State = StatePending
	}
	r.put(p)
}

// Cancel marks the pending request with the CLI's requestID cancelled
// (control_cancel_request) and returns it with true. For an unknown
// requestID, or one no longer pending, it changes nothing and returns what
// it has with false.
func (r *Registry) Cancel(requestID string) (Pending, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.byRequest(requestID)
	if e == nil {
		return Pending{}, false
	}
	if e.p.State != StatePending {
		return e.p.clone(), false
	}
	e.p.State = StateCancelled
	return e.p.clone(), true
}

// Expire marks every pending request at or past its ExpiresAt expired and
// returns them, oldest first.
func (r *Registry) Expire() []Pending {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	return r.expireWhere(func(p *Pending) bool { return expired(p, now) })
}

// ExpireThread marks every pending request of the thread expired (its
// process went away, so they can never be answered) and returns them,
// oldest first.
func (r *Registry) ExpireThread(threadKey string) []Pending {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.expireWhere(func(p *Pending) bool { return p.ThreadKey == threadKey })
}

// expireWhere expires the pending entries f selects; the caller holds mu.
func (r *Registry) expireWhere(f func(*Pending) bool) []Pending {
	var hit []*entry
	for _, e := range r.byID {
		if e.p.State == StatePending && f(&e.p) {
			e.p.State = StateExpired
			hit = append(hit, e)
		}
	}
	return sorted(hit)
}

// sorted copies entries out, oldest first.
func sorted(es []*entry) []Pending {
	slices.SortFunc(es, func(a, b *entry) int {
		if c := a.p.CreatedAt.Compare(b.p.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	out := make([]Pending, len(es))
	for i, e := range es {
		out[i] = e.p.clone()
	}
	return out
}

// Get returns the entry with the approval id.
func (r *Registry) Get(id string) (Pending, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byID[id]; ok {
		return e.p.clone(), true
	}
	return Pending{}, false
}

// ByRequestID returns the entry with the CLI's request_id.
func (r *Registry) ByRequestID(requestID string) (Pending, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.byRequest(requestID); e != nil {
		return e.p.clone(), true
	}
	return Pending{}, false
}

func (r *Registry) byRequest(requestID string) *entry {
	if requestID == "" {
		return nil
	}
	id, ok := r.byReq[requestID]
	if !ok {
		return nil
	}
	return r.byID[id]
}

// PendingFor returns the thread's requests still pending, oldest first.
func (r *Registry) PendingFor(threadKey string) []Pending {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hit []*entry
	for _, e := range r.byID {
		if e.p.State == StatePending && e.p.ThreadKey == threadKey {
			hit = append(hit, e)
		}
	}
	return sorted(hit)
}

// Forget drops the entry, whatever its state, to free memory once it is
// finished and stored. A later Decide on its id returns ErrUnknown.
func (r *Registry) Forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byID[id]
	if !ok {
		return
	}
	if r.byReq[e.p.RequestID] == id {
		delete(r.byReq, e.p.RequestID)
	}
	delete(r.byID, id)
}

// NextExpiry returns the earliest ExpiresAt among pending requests that
// expire at all; ok is false when there is none. The caller sleeps until
// then and calls Expire.
func (r *Registry) NextExpiry() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var next time.Time
	for _, e := range r.byID {
		if e.p.State != StatePending || e.p.ExpiresAt.IsZero() {
			continue
		}
		if next.IsZero() || e.p.ExpiresAt.Before(next) {
			next = e.p.ExpiresAt
		}
	}
	return next, !next.IsZero()
}
