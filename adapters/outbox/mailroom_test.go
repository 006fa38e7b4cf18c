package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// platform is a fake adapter: it records the calls it is made, in order,
// and can be held (every call waits until released) or made to fail posts.
type platform struct {
	mu       sync.Mutex
	calls    []string
	n        int
	gate     chan struct{} // nil: calls go through at once
	failPost int           // the next failPost posts fail
	entered  chan string   // each call's description as it starts, if set
}

func (p *platform) record(ctx context.Context, s string) error {
	if p.entered != nil {
		p.entered <- s
	}
	p.mu.Lock()
	gate := p.gate
	p.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, s)
	return nil
}

func (p *platform) hold() {
	p.mu.Lock()
	p.gate = make(chan struct{})
	p.mu.Unlock()
}

func (p *platform) release() {
	p.mu.Lock()
	close(p.gate)
	p.gate = nil
	p.mu.Unlock()
}

func (p *platform) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func (p *platform) Name() string { return "fake" }
func (p *platform) Run(ctx context.Context, _ func(context.Context, adapters.Event) error) error {
	<-ctx.Done()
	return nil
}

func (p *platform) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	if err := p.record(ctx, "post "+t.Thread+" "+m.Text); err != nil {
		return adapters.MessageRef{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failPost > 0 {
		p.failPost--
		p.calls[len(p.calls)-1] += " (failed)"
		return adapters.MessageRef{}, errors.New("platform down")
	}
	p.n++
	return adapters.MessageRef{Thread: t, ID: fmt.Sprintf("m%d", p.n)}, nil
}

func (p *platform) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	return p.record(ctx, "edit "+ref.ID+" "+m.Text)
}

func (p *platform) Ask(ctx context.Context, t adapters.ThreadRef, pr adapters.Prompt) (adapters.MessageRef, error) {
	if err := p.record(ctx, "ask "+t.Thread+" "+pr.Title); err != nil {
		return adapters.MessageRef{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	return adapters.MessageRef{Thread: t, ID: fmt.Sprintf("m%d", p.n)}, nil
}

func (p *platform) UpdatePrompt(ctx context.Context, ref adapters.MessageRef, pr adapters.Prompt) error {
	return p.record(ctx, "update "+ref.ID+" "+pr.Outcome)
}

var (
	t1 = adapters.ThreadRef{Platform: "fake", Channel: "c", Thread: "t1"}
	t2 = adapters.ThreadRef{Platform: "fake", Channel: "c", Thread: "t2"}
)

func text(s string) adapters.Message { return adapters.Message{Kind: adapters.KindText, Text: s} }

// drain closes the mailroom and fails the test if what was queued did not
// all go out.
func drain(t *testing.T, c *Mailroom) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func TestOrderAndResolvedRefs(t *testing.T) {
	p := &platform{}
	c := NewMailroom(p, nil)
	ctx := context.Background()
	a, _ := c.Post(ctx, t1, text("a"))
	drainLane(t, c, t1) // a is posted: the next edit is an edit
	_ = c.Edit(ctx, a, text("a2"))
	b, _ := c.Post(ctx, t1, text("b"))
	drainLane(t, c, t1)
	_ = c.Edit(ctx, b, text("b2"))
	ask, err := c.Ask(ctx, t1, adapters.Prompt{Title: "may I"})
	if err != nil || ask.ID == "" || strings.HasPrefix(ask.ID, provisional) {
		t.Fatalf("ask: %+v %v", ask, err)
	}
	_ = c.UpdatePrompt(ctx, ask, adapters.Prompt{Outcome: "allowed"})
	drain(t, c)
	want := []string{"post t1 a", "edit m1 a2", "post t1 b", "edit m2 b2", "ask t1 may I", "update m3 allowed"}
	if got := p.log(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
	if !strings.HasPrefix(a.ID, provisional) || a.Thread != t1 {
		t.Errorf("Post's ref %+v", a)
	}
}

// drainLane waits until t's lane has made everything queued.
func drainLane(t *testing.T, c *Mailroom, th adapters.ThreadRef) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		l := c.lanes[th]
		busy := l != nil && l.running
		c.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("lane never emptied")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWorkerNeverWaits: with the platform holding every call, Post, Edit
// and UpdatePrompt still return, and what queued behind the held call
// collapses to the latest content of each message.
func TestWorkerNeverWaits(t *testing.T) {
	p := &platform{entered: make(chan string, 100)}
	p.hold()
	c := NewMailroom(p, nil)
	ctx := context.Background()
	first, _ := c.Post(ctx, t1, text("first"))
	<-p.entered // the lane is inside the platform's call, held
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Edit(ctx, first, text("first, longer"))
		_ = c.Edit(ctx, first, text("first, longer still"))
		x, _ := c.Post(ctx, t1, text("x"))
		for i := range 50 {
			_ = c.Edit(ctx, x, text(fmt.Sprintf("x%d", i)))
		}
		_ = c.Edit(ctx, first, text("first, final"))
		_, _ = c.Post(ctx, t1, text("footer"))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Post or Edit waited on a held platform")
	}
	p.release()
	drain(t, c)
	want := []string{"post t1 first", "edit m1 first, final", "post t1 x49", "post t1 footer"}
	if got := p.log(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

// TestLanesAreIndependent: a thread whose call the platform holds does not
// hold another thread's.
func TestLanesAreIndependent(t *testing.T) {
	p := &platform{entered: make(chan string, 10)}
	c := NewMailroom(p, nil)
	ctx := context.Background()
	p.hold()
	_, _ = c.Post(ctx, t1, text("held"))
	<-p.entered
	p.mu.Lock()
	held := p.gate
	p.gate = nil // only the call already inside stays held
	p.mu.Unlock()
	defer func() { close(held); drain(t, c) }()
	// t2's calls go through while t1's first call is still held.
	ref, err := c.Ask(ctx, t2, adapters.Prompt{Title: "other thread"})
	if err != nil || ref.ID == "" {
		t.Fatalf("t2 ask: %+v %v", ref, err)
	}
	<-p.entered
	if got := p.log(); len(got) != 1 || got[0] != "ask t2 other thread" {
		t.Errorf("calls while t1 is held: %q", got)
	}
}

// TestFailedPostLandsLater: a post that failed is made again by the next
// edit of its message, with that edit's content.
func TestFailedPostLandsLater(t *testing.T) {
	p := &platform{failPost: 1}
	c := NewMailroom(p, nil)
	ctx := context.Background()
	m, _ := c.Post(ctx, t1, text("partial"))
	drainLane(t, c, t1)
	_ = c.Edit(ctx, m, text("complete"))
	drainLane(t, c, t1)
	_ = c.Edit(ctx, m, text("complete, edited"))
	drain(t, c)
	want := []string{"post t1 partial (failed)", "post t1 complete", "edit m1 complete, edited"}
	if got := p.log(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

func TestAskGivesUpWithItsContext(t *testing.T) {
	p := &platform{entered: make(chan string, 10)}
	p.hold()
	c := NewMailroom(p, nil)
	_, _ = c.Post(context.Background(), t1, text("held"))
	<-p.entered
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Ask(ctx, t1, adapters.Prompt{Title: "late"})
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Ask after its context ended: %v", err)
	}
	p.release()
	drain(t, c)
	for _, call := range p.log() {
		if strings.HasPrefix(call, "ask") {
			t.Errorf("a prompt nobody waits for was posted: %q", call)
		}
	}
}

func TestCloseWaitsThenRefuses(t *testing.T) {
	p := &platform{entered: make(chan string, 10)}
	p.hold()
	c := NewMailroom(p, nil)
	ctx := context.Background()
	_, _ = c.Post(ctx, t1, text("last words"))
	<-p.entered
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := c.Close(short); err == nil {
		t.Error("Close returned nil with a call still held")
	}
	if _, err := c.Post(ctx, t1, text("after close")); !errors.Is(err, ErrClosed) {
		t.Errorf("Post after Close: %v", err)
	}
	p.release()
	drain(t, c)
	if got := p.log(); len(got) != 1 || got[0] != "post t1 last words" {
		t.Errorf("calls: %q", got)
	}
}

// TestBounded: a thread that posts more messages than maxResolved keeps
// maxResolved ids; Forget drops the thread.
func TestBounded(t *testing.T) {
	p := &platform{}
	c := NewMailroom(p, nil)
	ctx := context.Background()
	for i := range maxResolved + 500 {
		_, _ = c.Post(ctx, t1, text(fmt.Sprint(i)))
	}
	drainLane(t, c, t1)
	c.mu.Lock()
	n, o := len(c.lanes[t1].resolved), len(c.lanes[t1].order)
	c.mu.Unlock()
	if n != maxResolved || o != maxResolved {
		t.Errorf("ids kept: %d (order %d), want %d", n, o, maxResolved)
	}
	c.Forget(t1)
	c.mu.Lock()
	left := len(c.lanes)
	c.mu.Unlock()
	if left != 0 {
		t.Errorf("lanes after Forget: %d", left)
	}
}

// statusPlatform is a platform with a status line.
type statusPlatform struct{ platform }

func (p *statusPlatform) SetStatus(ctx context.Context, t adapters.ThreadRef, status string) error {
	return p.record(ctx, "status "+t.Thread+" "+status)
}

// TestStatusInOrder: a status goes out in its place among the thread's
// messages (a clear never overtakes the answer), and one still waiting
// gives way to the next.
func TestStatusInOrder(t *testing.T) {
	p := &statusPlatform{}
	p.entered = make(chan string, 100)
	c := NewMailroom(p, nil)
	ctx := context.Background()
	_ = c.SetStatus(ctx, t1, "thinking")
	if got := <-p.entered; got != "status t1 thinking" {
		t.Fatalf("first call %q", got)
	}
	p.hold()
	_, _ = c.Post(ctx, t1, text("answer"))
	<-p.entered // the post is held on the platform
	_ = c.SetStatus(ctx, t1, "still thinking")
	_, _ = c.Post(ctx, t1, text("footer"))
	_ = c.SetStatus(ctx, t1, "")
	p.release()
	drain(t, c)
	want := []string{"status t1 thinking", "post t1 answer", "post t1 footer", "status t1 "}
	if got := p.log(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}

	// An adapter without a status line is not called.
	plain := &platform{}
	c = NewMailroom(plain, nil)
	if err := c.SetStatus(ctx, t1, "thinking"); err != nil {
		t.Error(err)
	}
	drain(t, c)
	if got := plain.log(); len(got) != 0 {
		t.Errorf("calls on an adapter without status: %q", got)
	}
}
