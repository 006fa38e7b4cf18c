package approvals

import (
	"encoding/json"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"
)

// clock is a manual clock for the injected now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const (
	starter = "U_ALICE"
	admin   = "U_ROOT"
	other   = "U_MALLORY"
	timeout = 5 * time.Minute
)

var questionInput = json.RawMessage(`{"questions":[{"question":"Which color?","header":"Color","options":[{"label":"Red","description":"warm"},{"label":"Blue","description":"calm"}],"multiSelect":false}]}`)

func newTestRegistry() (*Registry, *clock) {
	c := newClock()
	return NewRegistry([]string{admin, " ", ""}, timeout, c.Now), c
}

func toolRequest() Request {
	return Request{
		RequestID:  "req-1",
		ThreadKey:  "T1",
		ChannelKey: "C1",
		Starter:    starter,
		Tool:       "Bash",
		Input:      bashInput("touch a.txt"),
		ToolUseID:  "toolu_1",
	}
}

func questionRequest() Request {
	r := toolRequest()
	r.Tool, r.Input, r.Question = "AskUserQuestion", questionInput, true
	return r
}

func TestMayDecide(t *testing.T) {
	r, _ := newTestRegistry()
	for _, tt := range []struct {
		user, starter string
		want          bool
	}{
		{starter, starter, true},
		{admin, starter, true},
		{admin, "", true},
		{other, starter, false},
		{"", "", false},
		{"", starter, false},
		{" ", starter, false},
	} {
		if got := r.MayDecide("C1", tt.user, tt.starter); got != tt.want {
			t.Errorf("MayDecide(%q, %q) = %v, want %v", tt.user, tt.starter, got, tt.want)
		}
	}
}

func TestAdd(t *testing.T) {
	r, c := newTestRegistry()
	p := r.Add(toolRequest())
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(p.ID) {
		t.Fatalf("ID = %q, want 32 hex digits", p.ID)
	}
	if p.State != StatePending || !p.CreatedAt.Equal(c.Now()) || !p.ExpiresAt.Equal(c.Now().Add(timeout)) {
		t.Fatalf("Add = %+v", p)
	}
	q := r.Add(toolRequest())
	if q.ID == p.ID {
		t.Fatal("two requests got the same id")
	}

	// Copies: mutating what Add returned does not reach the registry.
	p.Input[2] = 'X'
	p.State = StateAllowed
	if got, _ := r.Get(p.ID); got.State != StatePending || string(got.Input) != string(bashInput("touch a.txt")) {
		t.Fatalf("registry changed through a returned copy: %+v", got)
	}

	// Explicit times and ids are kept.
	req := toolRequest()
	req.ID, req.RequestID = "fixed", "req-fixed"
	req.CreatedAt = c.Now().Add(-time.Hour)
	req.ExpiresAt = c.Now().Add(time.Hour)
	f := r.Add(req)
	if f.ID != "fixed" || !f.CreatedAt.Equal(req.CreatedAt) || !f.ExpiresAt.Equal(req.ExpiresAt) {
		t.Fatalf("Add kept %+v", f)
	}

	// Adding a known id again is a no-op, whatever it carries.
	if _, err := r.Decide("fixed", Decision{Choice: ChoiceAllow, By: starter}); err != nil {
		t.Fatal(err)
	}
	req.Tool = "Edit"
	again := r.Add(req)
	if again.State != StateAllowed || again.Tool != "Bash" {
		t.Fatalf("re-Add reopened or replaced the entry: %+v", again)
	}
}

func TestLookupAndForget(t *testing.T) {
	r, _ := newTestRegistry()
	p := r.Add(toolRequest())
	if got, ok := r.ByRequestID("req-1"); !ok || got.ID != p.ID {
		t.Fatalf("ByRequestID = %+v, %v", got, ok)
	}
	if _, ok := r.ByRequestID(""); ok {
		t.Fatal("ByRequestID(\"\") found something")
	}
	if _, ok := r.ByRequestID("nope"); ok {
		t.Fatal("ByRequestID(nope) found something")
	}
	if _, ok := r.Get("nope"); ok {
		t.Fatal("Get(nope) found something")
	}
	if _, ok := r.Cancel("nope"); ok {
		t.Fatal("Cancel(nope) reported a cancellation")
	}
	if got, ok := r.Cancel("req-1"); !ok || got.State != StateCancelled || got.ID != p.ID {
		t.Fatalf("Cancel = %+v, %v", got, ok)
	}
	if got, ok := r.Cancel("req-1"); ok || got.State != StateCancelled {
		t.Fatalf("second Cancel = %+v, %v", got, ok)
	}
	r.Forget(p.ID)
	r.Forget(p.ID) // twice is fine
	if _, ok := r.Get(p.ID); ok {
		t.Fatal("Get after Forget found it")
	}
	if _, ok := r.ByRequestID("req-1"); ok {
		t.Fatal("ByRequestID after Forget found it")
	}
	if _, err := r.Decide(p.ID, Decision{Choice: ChoiceAllow, By: starter}); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Decide after Forget: %v", err)
	}
}

func TestExpiry(t *testing.T) {
	r, c := newTestRegistry()
	if _, ok := r.NextExpiry(); ok {
		t.Fatal("NextExpiry on an empty registry")
	}
	add := func(reqID, thread string) *Pending {
		req := toolRequest()
		req.RequestID, req.ThreadKey = reqID, thread
		return r.Add(req)
	}
	a1 := add("a1", "A")
	c.Advance(time.Minute)
	b1 := add("b1", "B")
	c.Advance(time.Minute)
	a2 := add("a2", "A")
	a3 := add("a3", "A") // same CreatedAt as a2: insertion order breaks the tie
	decided := add("a4", "A")
	if _, err := r.Decide(decided.ID, Decision{Choice: ChoiceDeny, By: starter}); err != nil {
		t.Fatal(err)
	}

	if got := ids(r.PendingFor("A")); !equal(got, []string{a1.ID, a2.ID, a3.ID}) {
		t.Fatalf("PendingFor(A) = %v", got)
	}
	if next, ok := r.NextExpiry(); !ok || !next.Equal(a1.ExpiresAt) {
		t.Fatalf("NextExpiry = %v, %v; want %v", next, ok, a1.ExpiresAt)
	}
	if got := r.Expire(); len(got) != 0 {
		t.Fatalf("Expire before any deadline = %v", ids(got))
	}

	c.Advance(timeout - 2*time.Minute) // a1's deadline
	got := r.Expire()
	if !equal(ids(got), []string{a1.ID}) || got[0].State != StateExpired {
		t.Fatalf("Expire = %+v", got)
	}
	if next, ok := r.NextExpiry(); !ok || !next.Equal(b1.ExpiresAt) {
		t.Fatalf("NextExpiry = %v, %v; want %v", next, ok, b1.ExpiresAt)
	}

	got = r.ExpireThread("A")
	if !equal(ids(got), []string{a2.ID, a3.ID}) {
		t.Fatalf("ExpireThread(A) = %v", ids(got))
	}
	if got := r.ExpireThread("A"); len(got) != 0 {
		t.Fatalf("ExpireThread(A) again = %v", ids(got))
	}
	if p, _ := r.Get(decided.ID); p.State != StateDenied {
		t.Fatalf("decided entry became %q", p.State)
	}
	if next, ok := r.NextExpiry(); !ok || !next.Equal(b1.ExpiresAt) {
		t.Fatalf("NextExpiry = %v, %v; want %v", next, ok, b1.ExpiresAt)
	}
	c.Advance(time.Hour)
	if got := r.Expire(); !equal(ids(got), []string{b1.ID}) {
		t.Fatalf("Expire = %v", ids(got))
	}
	if _, ok := r.NextExpiry(); ok {
		t.Fatal("NextExpiry with nothing pending")
	}
	if got := r.PendingFor("A"); len(got) != 0 {
		t.Fatalf("PendingFor(A) = %v", ids(got))
	}
}

func TestRestore(t *testing.T) {
	r, c := newTestRegistry()
	old := Pending{Request: toolRequest(), State: StatePending}
	old.ID = "stored-1"
	old.CreatedAt = c.Now().Add(-time.Hour)
	old.ExpiresAt = c.Now().Add(-time.Minute) // expired while the bot was down
	r.Restore(old)

	done := Pending{Request: toolRequest(), State: StateAllowed,
		Decision: Decision{Choice: ChoiceAllow, By: admin, At: c.Now().Add(-time.Hour)}}
	done.ID, done.RequestID = "stored-2", "req-2"
	r.Restore(done)

	fresh := Pending{Request: toolRequest()} // no state, no id
	fresh.RequestID = "req-3"
	fresh.ExpiresAt = c.Now().Add(time.Hour)
	r.Restore(fresh)
	f, ok := r.ByRequestID("req-3")
	if !ok || f.ID == "" || f.State != StatePending {
		t.Fatalf("restored fresh = %+v, %v", f, ok)
	}

	if got, _ := r.Get("stored-1"); got.CreatedAt != old.CreatedAt || got.ExpiresAt != old.ExpiresAt {
		t.Fatalf("Restore changed times: %+v", got)
	}
	if _, err := r.Decide("stored-2", Decision{Choice: ChoiceDeny, By: starter}); !errors.Is(err, ErrAlreadyDecided) {
		t.Fatalf("Decide on restored decided entry: %v", err)
	}
	if got := r.Expire(); !equal(ids(got), []string{"stored-1"}) {
		t.Fatalf("Expire = %v", ids(got))
	}
	// Restore replaces an entry with the same id, and its request_id index.
	moved := done
	moved.RequestID = "req-2b"
	r.Restore(moved)
	if _, ok := r.ByRequestID("req-2"); ok {
		t.Fatal("old request_id still indexed")
	}
	if got, ok := r.ByRequestID("req-2b"); !ok || got.ID != "stored-2" {
		t.Fatalf("ByRequestID(req-2b) = %+v, %v", got, ok)
	}
}

func TestNilClock(t *testing.T) {
	r := NewRegistry(nil, time.Minute, nil)
	p := r.Add(toolRequest())
	if p.CreatedAt.IsZero() {
		t.Fatal("nil clock: CreatedAt not set")
	}
}

func ids(ps []Pending) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIsAdminGlobs: admins given as globs decide as admins, here as in the
// bot's own check (ids of the look-alike kind do not pass).
func TestIsAdminGlobs(t *testing.T) {
	r := NewRegistry([]string{"@*:example.org", "U_ROOT"}, time.Minute, nil)
	for user, want := range map[string]bool{
		"@ana:example.org": true, "U_ROOT": true, "": false,
		"@ana:example.org.evil": false, "@ana:evil.org": false, "U_ROOT2": false,
	} {
		if got := r.IsAdmin("C1", user); got != want {
			t.Errorf("IsAdmin(%q) = %v, want %v", user, got, want)
		}
	}
	p := r.Add(toolRequest())
	if _, err := r.Decide(p.ID, Decision{Choice: ChoiceAllowAlways, By: "@ana:example.org"}); err != nil {
		t.Errorf("a glob admin's always allow: %v", err)
	}
}

// TestChannelAdmins: with admins per channel, an admin of channel A
// decides A's requests (Always allow included) and nothing of B's; the
// starter still decides their own.
func TestChannelAdmins(t *testing.T) {
	admins := map[string]string{"A": "U_ADMIN_A", "B": "U_ADMIN_B"}
	r := NewChannelRegistry(func(ch, user string) bool { return admins[ch] == user }, time.Minute, nil)
	inB := toolRequest()
	inB.ChannelKey = "B"
	p := r.Add(inB)
	for _, c := range []Choice{ChoiceAllowAlways, ChoiceAllow, ChoiceDeny} {
		if _, err := r.Decide(p.ID, Decision{Choice: c, By: "U_ADMIN_A"}); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("A's admin decides %s in B: err = %v, want ErrNotAllowed", c, err)
		}
	}
	if r.MayDecide("B", "U_ADMIN_A", starter) || !r.MayDecide("B", "U_ADMIN_B", starter) || !r.MayDecide("B", starter, starter) {
		t.Error("MayDecide in B: want B's admin and the starter only")
	}
	if got, _ := r.Get(p.ID); got.State != StatePending {
		t.Fatalf("after A's admin: %s, want pending", got.State)
	}
	if _, err := r.Decide(p.ID, Decision{Choice: ChoiceAllowAlways, By: starter}); !errors.Is(err, ErrAdminOnly) {
		t.Errorf("the starter's Always allow: err = %v, want ErrAdminOnly", err)
	}
	if _, err := r.Decide(p.ID, Decision{Choice: ChoiceAllowAlways, By: "U_ADMIN_B"}); err != nil {
		t.Errorf("B's admin's Always allow in B: %v", err)
	}
}
