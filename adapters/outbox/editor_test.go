package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

const interval = time.Second

// recorder is a platform: it records what each send made a message show.
type recorder struct {
	mu       sync.Mutex
	sends    []sent
	fail     map[string]int // fail the next n sends of an id
	gate     chan struct{}  // when set, every send waits for it
	inFlight map[string]int // sends in flight per thread ("t" prefix of the content)
	overlap  bool           // two sends of one thread were in flight at once
}

type sent struct{ id, c string }

var errBusy = errors.New("platform busy")

func newRecorder() *recorder {
	return &recorder{fail: map[string]int{}, inFlight: map[string]int{}}
}

func (r *recorder) send(ctx context.Context, id string, c string) error {
	thread := id[:1]
	r.mu.Lock()
	r.inFlight[thread]++
	if r.inFlight[thread] > 1 {
		r.overlap = true
	}
	gate := r.gate
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight[thread]--
		r.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail[id] > 0 {
		r.fail[id]--
		return errBusy
	}
	r.sends = append(r.sends, sent{id, c})
	return nil
}

func (r *recorder) got() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.sends...)
}

// shown is the last content each id got.
func (r *recorder) shown() map[string]string {
	m := map[string]string{}
	for _, s := range r.got() {
		m[s.id] = s.c
	}
	return m
}

// waitFor polls cond for up to 10 s: how long a send takes is up to the
// machine; only what lands (and in which order) is asserted.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// settle gives the owner goroutine a moment to act on what it may do now
// (used only before asserting that nothing more was sent).
func settle() { time.Sleep(30 * time.Millisecond) }

func newTestEditor(t *testing.T, r *recorder, clk *fakeClock, mod func(*Config)) *Editor[string] {
	cfg := Config{Interval: interval, Clock: clk, Drain: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	e := NewEditor(cfg, r.send)
	t.Cleanup(e.Close)
	return e
}

func TestEditorCoalescesAndPaces(t *testing.T) {
	cases := []struct {
		name    string
		updates int
		urgent  bool // the last update is the final state
		// sends before the clock moves, and after one interval
		before, after int
	}{
		{"one update", 1, false, 1, 1},
		{"a burst lands as the first and the latest", 50, false, 1, 2},
		{"a final state does not wait for the interval", 50, true, 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, clk := newRecorder(), newFakeClock()
			e := newTestEditor(t, r, clk, nil)
			e.Set("a", "a1", "v1", false)
			waitFor(t, "the first edit", func() bool { return len(r.got()) == 1 })
			for i := 2; i <= c.updates; i++ {
				e.Set("a", "a1", fmt.Sprintf("v%d", i), c.urgent && i == c.updates)
			}
			want := fmt.Sprintf("v%d", c.updates)
			if c.before > 1 {
				waitFor(t, "the final edit", func() bool { return len(r.got()) == c.before })
			}
			settle()
			if n := len(r.got()); n != c.before {
				t.Fatalf("%d sends before the interval passed, want %d: %v", n, c.before, r.got())
			}
			clk.Advance(interval)
			waitFor(t, "the latest content", func() bool { return r.shown()["a1"] == want })
			settle()
			if n := len(r.got()); n != c.after {
				t.Errorf("%d sends, want %d: %v", n, c.after, r.got())
			}
		})
	}
}

func TestEditorUrgentStaysUrgent(t *testing.T) {
	r, clk := newRecorder(), newFakeClock()
	e := newTestEditor(t, r, clk, nil)
	r.gate = make(chan struct{})
	e.Set("a", "a1", "live", false)
	waitFor(t, "the first edit in flight", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.inUse == 1
	})
	// A final state, then (a late tool line) a live edit of the same
	// message while the first is in flight: the pending edit stays urgent,
	// with the latest content, and does not wait for the interval.
	e.Set("a", "a1", "final", true)
	e.Set("a", "a1", "latest", false)
	close(r.gate)
	waitFor(t, "the urgent edit", func() bool { return r.shown()["a1"] == "latest" })
}

func TestEditorFlushThreadBeforePost(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("all=%v", all), func(t *testing.T) {
			r, clk := newRecorder(), newFakeClock()
			e := newTestEditor(t, r, clk, nil)
			// a1 and a2 are sent once; their next edits are paced.
			e.Set("a", "a1", "text 1", false)
			e.Set("a", "a2", "tool running", false)
			e.Set("b", "b1", "other thread", false)
			waitFor(t, "the first edits", func() bool { return len(r.got()) == 3 })
			r.mu.Lock()
			r.gate = make(chan struct{})
			r.mu.Unlock()
			e.Set("a", "a1", "text 2", false)   // paced
			e.Set("a", "a2", "tool done", true) // urgent: in flight, held
			e.Set("b", "b1", "other 2", false)  // paced, another thread
			waitFor(t, "the urgent edit in flight", func() bool { return e.Pending() == 3 && len(r.got()) == 3 })
			done := make(chan error, 1)
			go func() { done <- e.FlushThread(t.Context(), "a", all) }()
			select {
			case <-done:
				t.Fatal("FlushThread returned before the urgent edit landed")
			case <-time.After(20 * time.Millisecond):
			}
			close(r.gate)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			shown := r.shown()
			if shown["a2"] != "tool done" {
				t.Errorf("after FlushThread a2 shows %q", shown["a2"])
			}
			if want := map[bool]string{false: "text 1", true: "text 2"}[all]; shown["a1"] != want {
				t.Errorf("after FlushThread(all=%v) a1 shows %q, want %q", all, shown["a1"], want)
			}
			if shown["b1"] != "other thread" {
				t.Errorf("another thread's paced edit was sent: %q", shown["b1"])
			}
		})
	}
}

func TestEditorThreadOrder(t *testing.T) {
	r, clk := newRecorder(), newFakeClock()
	e := newTestEditor(t, r, clk, func(c *Config) { c.Senders = 8 })
	// Final states of many messages of two threads: each thread's land in
	// the order they were set, never two at once.
	for i := range 40 {
		e.Set("a", fmt.Sprintf("a%02d", i), "final", true)
		e.Set("b", fmt.Sprintf("b%02d", i), "final", true)
	}
	waitFor(t, "every final state", func() bool { return len(r.got()) == 80 })
	next := map[byte]int{}
	for _, s := range r.got() {
		th := s.id[0]
		if want := fmt.Sprintf("%c%02d", th, next[th]); s.id != want {
			t.Fatalf("sent %s, want %s next: %v", s.id, want, r.got())
		}
		next[th]++
	}
	if r.overlap {
		t.Error("two sends of one thread were in flight at once")
	}
}

func TestEditorRetries(t *testing.T) {
	cases := []struct {
		name   string
		fails  int
		tries  int
		urgent bool
		lands  bool
	}{
		{"a paced edit is tried again after the interval", 2, 0, false, true},
		{"an urgent edit is tried again at once", 2, 0, true, true},
		{"tries are bounded", 5, 3, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, clk := newRecorder(), newFakeClock()
			var failed sync.WaitGroup
			failed.Add(min(c.fails, max(c.tries, c.fails)))
			if c.tries > 0 {
				failed = sync.WaitGroup{}
				failed.Add(c.tries)
			}
			e := newTestEditor(t, r, clk, func(cfg *Config) {
				cfg.Retry = func(err error) bool { return errors.Is(err, errBusy) }
				cfg.Tries = c.tries
				cfg.Failed = func(string, error) { failed.Done() }
			})
			r.fail["a1"] = c.fails
			e.Set("a", "a1", "words", c.urgent)
			for len(r.got()) == 0 && !waitedOut(&failed) {
				clk.Advance(interval)
				time.Sleep(time.Millisecond)
			}
			clk.Advance(interval)
			settle()
			if got := r.shown()["a1"] == "words"; got != c.lands {
				t.Errorf("landed %v, want %v", got, c.lands)
			}
		})
	}
}

// waitedOut reports whether wg is done (without blocking).
func waitedOut(wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(time.Millisecond):
		return false
	}
}

func TestEditorCloseDrains(t *testing.T) {
	r, clk := newRecorder(), newFakeClock()
	e := NewEditor(Config{Interval: time.Hour, Clock: clk}, r.send)
	for i := range 10 {
		e.Set("a", fmt.Sprintf("a%d", i), "first", false)
	}
	waitFor(t, "the first edits", func() bool { return len(r.got()) == 10 })
	for i := range 10 {
		e.Set("a", fmt.Sprintf("a%d", i), "last", false) // paced an hour away
	}
	e.Close()
	for id, c := range r.shown() {
		if c != "last" {
			t.Errorf("%s shows %q after Close", id, c)
		}
	}
}

func TestEditorCloseGivesUpAtTheDeadline(t *testing.T) {
	r, clk := newRecorder(), newFakeClock()
	r.gate = make(chan struct{}) // the platform never answers
	e := NewEditor(Config{Interval: interval, Clock: clk, Drain: 100 * time.Millisecond}, r.send)
	e.Set("a", "a1", "stuck", true)
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not give up")
	}
}

func TestEditorForgetsWhatNoLongerPaces(t *testing.T) {
	r, clk := newRecorder(), newFakeClock()
	e := newTestEditor(t, r, clk, nil)
	for i := range 1000 {
		e.Set(fmt.Sprintf("t%d", i), fmt.Sprintf("m%d", i), "final", true)
	}
	waitFor(t, "every edit", func() bool { return len(r.got()) == 1000 })
	clk.Advance(interval)
	e.Set("x", "x1", "one more", true)
	waitFor(t, "one more", func() bool { return len(r.got()) == 1001 })
	if n := e.Tracked(); n > 2*minSweep {
		t.Errorf("the editor holds %d messages after 1,000 were sent an interval ago", n)
	}
}

func TestEditorFlushSendsNow(t *testing.T) {
	r, clk := newRecorder(), newFakeClock()
	e := newTestEditor(t, r, clk, nil)
	e.Set("a", "a1", "v1", false)
	waitFor(t, "the first edit", func() bool { return len(r.got()) == 1 })
	e.Set("a", "a1", "v2", false) // paced an interval away
	if err := e.Flush(t.Context(), "a1"); err != nil {
		t.Fatal(err)
	}
	if got := r.shown()["a1"]; got != "v2" {
		t.Errorf("after Flush a1 shows %q", got)
	}
	if err := e.Flush(t.Context(), "nothing"); err != nil {
		t.Errorf("Flush of an unknown id: %v", err)
	}
	if e.Sent() != 2 {
		t.Errorf("Sent() = %d, want 2", e.Sent())
	}
}

func TestEditorDiscard(t *testing.T) {
	r, clk := newRecorder(), newFakeClock()
	e := newTestEditor(t, r, clk, nil)
	gate := make(chan struct{})
	r.mu.Lock()
	r.gate = gate
	r.mu.Unlock()
	e.Set("a", "a1", "in flight", false)
	waitFor(t, "the first send to begin", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.inFlight["a"] == 1
	})
	e.Set("a", "a1", "moot", true)
	discarded := make(chan error, 1)
	go func() { discarded <- e.Discard(t.Context(), "a1") }()
	select {
	case err := <-discarded:
		t.Fatalf("Discard returned (%v) while a send was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	if err := <-discarded; err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * interval)
	settle()
	if got := r.got(); len(got) != 1 || got[0].c != "in flight" {
		t.Errorf("sent %v, want only the edit that was in flight", got)
	}
	if e.Pending() != 0 {
		t.Errorf("Pending() = %d after Discard", e.Pending())
	}
	if err := e.Discard(t.Context(), "unknown"); err != nil {
		t.Errorf("Discard of an unknown id: %v", err)
	}
}

// TestEditorPostCountsAsSend: a message just posted is paced from its
// post: its first live edit waits an interval (no edit right after the
// post), while its final state still goes at once.
func TestEditorPostCountsAsSend(t *testing.T) {
	cases := []struct {
		name   string
		posted bool
		urgent bool
		before int // sends before the interval passes
	}{
		{"never posted: due at once", false, false, 1},
		{"posted: the live edit waits an interval", true, false, 0},
		{"posted: the final state does not wait", true, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, clk := newRecorder(), newFakeClock()
			e := newTestEditor(t, r, clk, nil)
			if c.posted {
				e.Posted("a", "a1")
			}
			e.Set("a", "a1", "v2", c.urgent)
			if c.before > 0 {
				waitFor(t, "the edit", func() bool { return len(r.got()) == c.before })
			}
			settle()
			if n := len(r.got()); n != c.before {
				t.Fatalf("%d sends before the interval passed, want %d: %v", n, c.before, r.got())
			}
			clk.Advance(interval)
			waitFor(t, "the edit after the interval", func() bool { return r.shown()["a1"] == "v2" })
			settle()
			if n := len(r.got()); n != 1 {
				t.Errorf("%d sends, want 1: %v", n, r.got())
			}
		})
	}
}
