package approvals

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// Choice is what a person picked on an approval prompt, in the order every
// platform shows them.
type Choice string

// Choices.
const (
	ChoiceAllow       Choice = "allow"        // this request
	ChoiceAllowThread Choice = "allow_thread" // the same call for the rest of the thread (a file: that file)
	ChoiceAllowFolder Choice = "allow_folder" // a file's folder for the rest of the thread
	ChoiceAllowAlways Choice = "allow_always" // a persisted channel rule: admins only
	ChoiceDeny        Choice = "deny"         // with an optional reason
)

// Allows reports whether the choice lets the tool run.
func (c Choice) Allows() bool {
	return c == ChoiceAllow || c == ChoiceAllowThread || c == ChoiceAllowFolder || c == ChoiceAllowAlways
}

func (c Choice) valid() bool { return c.Allows() || c == ChoiceDeny }

// Typed is a decision typed as a reply.
type Typed struct {
	Choice Choice
	// Ref names the prompt: "2" (its number in the thread) or a prefix of
	// its id of at least 4 hex digits; "" when none was given.
	Ref string
	// Reason is a deny's reason, original case kept.
	Reason string
	// RefOrReason is set when a deny's first word may be either a hex id
	// or the first word of a reason ("deny cafe is closed"): the caller
	// reads it as Ref when it names an open prompt, else the whole text
	// after "deny" is the reason (in Reason with Ref "").
	RefOrReason bool
}

// ParseTyped reads a typed decision: "allow", "allow thread", "allow
// folder", "allow always", each with an optional prompt reference, or
// "deny [ref] [reason…]". A reference is "2", "#2" or an id prefix of at
// least 4 hex digits. Case-insensitive, any blanks between words. Anything
// else is not a decision (ok false).
func ParseTyped(text string) (Typed, bool) {
	t := strings.TrimSpace(text)
	words := strings.Fields(t)
	if len(words) == 0 {
		return Typed{}, false
	}
	switch strings.ToLower(words[0]) {
	case "allow":
		c, rest := ChoiceAllow, words[1:]
		if len(rest) > 0 {
			switch strings.ToLower(rest[0]) {
			case "thread":
				c, rest = ChoiceAllowThread, rest[1:]
			case "folder":
				c, rest = ChoiceAllowFolder, rest[1:]
			case "always":
				c, rest = ChoiceAllowAlways, rest[1:]
			}
		}
		switch {
		case len(rest) == 0:
			return Typed{Choice: c}, true
		case len(rest) == 1 && numberRef(rest[0]) != "":
			return Typed{Choice: c, Ref: numberRef(rest[0])}, true
		case len(rest) == 1 && hexRef(rest[0]):
			return Typed{Choice: c, Ref: strings.ToLower(rest[0])}, true
		}
		return Typed{}, false
	case "deny":
		reason := strings.TrimSpace(t[len(words[0]):])
		if len(words) == 1 {
			return Typed{Choice: ChoiceDeny}, true
		}
		first := words[1]
		after := strings.TrimSpace(reason[len(first):])
		if n := numberRef(first); n != "" {
			return Typed{Choice: ChoiceDeny, Ref: n, Reason: after}, true
		}
		if hexRef(first) {
			return Typed{Choice: ChoiceDeny, Ref: strings.ToLower(first), Reason: after, RefOrReason: true}, true
		}
		return Typed{Choice: ChoiceDeny, Reason: reason}, true
	}
	return Typed{}, false
}

// numberRef returns N for "N" or "#N", else "".
func numberRef(w string) string {
	w = strings.TrimPrefix(w, "#")
	if w == "" || len(w) > 6 {
		return ""
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return ""
		}
	}
	return w
}

func hexRef(w string) bool {
	if len(w) < 4 || len(w) > 32 {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i] | 0x20
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

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

// Errors of Decide. The caller tells the clicking person which one it was.
var (
	ErrUnknown         = errors.New("unknown approval")
	ErrNotAllowed      = errors.New("not allowed to decide this approval")
	ErrAdminOnly       = errors.New("only admins may allow always")
	ErrExpired         = errors.New("approval expired")
	ErrCancelled       = errors.New("approval cancelled")
	ErrAlreadyDecided  = errors.New("approval already decided")
	ErrInvalidDecision = errors.New("invalid decision")
)

// AlreadyDecidedError is returned by Decide for a request somebody already
// decided; it names them. errors.Is(err, ErrAlreadyDecided) holds.
type AlreadyDecidedError struct {
	By     string
	State  State
	Choice Choice
}

func (e *AlreadyDecidedError) Error() string {
	return fmt.Sprintf("already decided by %s (%s)", e.By, e.State)
}

// Is makes errors.Is(err, ErrAlreadyDecided) true.
func (e *AlreadyDecidedError) Is(target error) bool { return target == ErrAlreadyDecided }

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
	mu      sync.Mutex
	admins  map[string]bool
	timeout time.Duration
	now     func() time.Time
	byID    map[string]*entry
	byReq   map[string]string // request_id -> approval id
	seq     uint64
}

// NewRegistry returns an empty registry. admins may decide any request;
// timeout is how long a request waits (<= 0: forever); now is the clock
// (nil: time.Now).
func NewRegistry(admins []string, timeout time.Duration, now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	r := &Registry{
		admins:  make(map[string]bool, len(admins)),
		timeout: timeout,
		now:     now,
		byID:    make(map[string]*entry),
		byReq:   make(map[string]string),
	}
	for _, a := range admins {
		if a = strings.TrimSpace(a); a != "" {
			r.admins[a] = true
		}
	}
	return r
}

// MayDecide reports whether user may decide a request of a thread started by
// starter: the starter and the admins may; an empty user never may.
func (r *Registry) MayDecide(user, starter string) bool {
	if user == "" {
		return false
	}
	return user == starter || r.IsAdmin(user)
}

// IsAdmin reports whether user is one of the admins: an id given, or one
// matching a glob given (`@*:example.org`, as path.Match reads it).
func (r *Registry) IsAdmin(user string) bool {
	if user == "" {
		return false
	}
	if r.admins[user] {
		return true
	}
	for a := range r.admins {
		if strings.ContainsAny(a, "*?[") {
			if ok, _ := path.Match(a, user); ok {
				return true
			}
		}
	}
	return false
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

// Decide records d for the request id. The checks run in this order, and
// only a decision that passes them all changes anything:
//
//  1. an unknown id: ErrUnknown;
//  2. d.By may not decide (MayDecide): ErrNotAllowed;
//  3. already allowed or denied: *AlreadyDecidedError naming who decided,
//     also for a repeated click by that same person; expired: ErrExpired;
//     cancelled: ErrCancelled;
//  4. now at or past ExpiresAt: the request becomes StateExpired and the
//     error is ErrExpired;
//  5. the decision must fit the request (ErrInvalidDecision): one of the five
//     choices; for a Question only ChoiceAllow with answers (each key one of
//     the question texts) or ChoiceDeny; answers only for a Question;
//  6. ChoiceAllowAlways (a channel rule) only from an admin: ErrAdminOnly.
//
// Then the allow choices make it StateAllowed, deny
// StateDenied, and d is kept (d.At defaults to now). The first valid
// decision wins. The returned Pending is the entry after the call (zero for
// an unknown id).
func (r *Registry) Decide(id string, d Decision) (Pending, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byID[id]
	if !ok {
		return Pending{}, fmt.Errorf("approval %q: %w", id, ErrUnknown)
	}
	p := &e.p
	if !r.MayDecide(d.By, p.Starter) {
		return p.clone(), fmt.Errorf("approval %s: %q: %w", id, d.By, ErrNotAllowed)
	}
	switch p.State {
	case StatePending:
	case StateAllowed, StateDenied:
		return p.clone(), &AlreadyDecidedError{By: p.Decision.By, State: p.State, Choice: p.Decision.Choice}
	case StateExpired:
		return p.clone(), fmt.Errorf("approval %s: %w", id, ErrExpired)
	case StateCancelled:
		return p.clone(), fmt.Errorf("approval %s: %w", id, ErrCancelled)
	default:
		return p.clone(), fmt.Errorf("approval %s: unknown state %q: %w", id, p.State, ErrInvalidDecision)
	}
	now := r.now()
	if expired(p, now) {
		p.State = StateExpired
		return p.clone(), fmt.Errorf("approval %s: %w", id, ErrExpired)
	}
	if err := checkDecision(p, d); err != nil {
		return p.clone(), fmt.Errorf("approval %s: %w", id, err)
	}
	if d.Choice == ChoiceAllowAlways && !r.IsAdmin(d.By) {
		return p.clone(), fmt.Errorf("approval %s: %q: %w", id, d.By, ErrAdminOnly)
	}
	if d.At.IsZero() {
		d.At = now
	}
	d.Answers = maps.Clone(d.Answers)
	p.Decision = d
	p.State = StateDenied
	if d.Choice.Allows() {
		p.State = StateAllowed
	}
	return p.clone(), nil
}

func expired(p *Pending, now time.Time) bool {
	return !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt)
}

func checkDecision(p *Pending, d Decision) error {
	if !d.Choice.valid() {
		return fmt.Errorf("%w: unknown choice %q", ErrInvalidDecision, d.Choice)
	}
	if !p.Question {
		if len(d.Answers) > 0 {
			return fmt.Errorf("%w: answers for a request that is not a question", ErrInvalidDecision)
		}
		return nil
	}
	switch d.Choice {
	case ChoiceDeny:
		return nil
	case ChoiceAllow:
		if len(d.Answers) == 0 {
			return fmt.Errorf("%w: a question is answered, not just allowed", ErrInvalidDecision)
		}
		if _, err := AnswerInput(p.Input, d.Answers); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidDecision, err)
		}
		return nil
	default:
		return fmt.Errorf("%w: %q does not apply to a question", ErrInvalidDecision, d.Choice)
	}
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
