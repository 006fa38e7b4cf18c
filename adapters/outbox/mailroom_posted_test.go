package outbox

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// TestOnPosted: a post is told only once the platform has taken it (not
// when Post hands out its ref), a failed post is not told, and the later
// edit that makes it after all is, under the id Post handed out.
func TestOnPosted(t *testing.T) {
	p := &platform{}
	c := NewMailroom(p, nil)
	var mu sync.Mutex
	var told []string
	c.OnPosted(func(th adapters.ThreadRef, id string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, th.Thread+" "+id)
	})
	toldNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(told)
	}
	ctx := context.Background()

	p.hold()
	ref, err := c.Post(ctx, t1, text("first"))
	if err != nil {
		t.Fatal(err)
	}
	if got := toldNow(); len(got) != 0 {
		t.Errorf("told %q before the platform took the post", got)
	}
	p.release()
	waitIdle(t, c)
	if got, want := toldNow(), []string{"t1 " + ref.ID}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}

	p.mu.Lock()
	p.failPost = 1
	p.mu.Unlock()
	failed, _ := c.Post(ctx, t2, text("lost at first"))
	waitIdle(t, c)
	if got := toldNow(); len(got) != 1 {
		t.Errorf("a failed post was told: %q", got)
	}
	if err := c.Edit(ctx, failed, text("made by the edit")); err != nil {
		t.Fatal(err)
	}
	drain(t, c)
	if got, want := toldNow(), []string{"t1 " + ref.ID, "t2 " + failed.ID}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}
}

// waitIdle waits until the mailroom's lanes are empty (Idle).
func waitIdle(t *testing.T, c *Mailroom) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.busyLocked() > 0 {
		c.idle.Wait()
	}
}

// TestAwait: Await returns once the platform has taken the post, says so
// when it failed, gives up with its context, and takes a platform ref as
// made.
func TestAwait(t *testing.T) {
	p := &platform{}
	c := NewMailroom(p, nil)
	ctx := context.Background()

	p.hold()
	ref, _ := c.Post(ctx, t1, text("held"))
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	if err := c.Await(short, ref); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Await of a held post: %v, want the context's end", err)
	}
	cancel()
	p.release()
	if err := c.Await(ctx, ref); err != nil {
		t.Errorf("Await of a made post: %v", err)
	}

	p.mu.Lock()
	p.failPost = 1
	p.mu.Unlock()
	failed, _ := c.Post(ctx, t2, text("lost"))
	if err := c.Await(ctx, failed); !errors.Is(err, ErrNotPosted) {
		t.Errorf("Await of a failed post: %v, want ErrNotPosted", err)
	}
	if err := c.Await(ctx, adapters.MessageRef{Thread: t1, ID: "123.456"}); err != nil {
		t.Errorf("Await of a platform ref: %v", err)
	}
	drain(t, c)
}

// TestResolve: a provisional ref resolves to the platform's once the post
// is made, never before and not after it failed; a platform ref is
// itself; an Ask queued behind a post returns after the post is made, so
// the post's ref resolves then.
func TestResolve(t *testing.T) {
	p := &platform{}
	c := NewMailroom(p, nil)
	ctx := context.Background()

	p.hold()
	ref, _ := c.Post(ctx, t1, text("held"))
	if got, ok := c.Resolve(ref); ok {
		t.Errorf("resolved a post not made yet: %v", got)
	}
	p.release()
	if _, err := c.Ask(ctx, t1, adapters.Prompt{ID: "p"}); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Resolve(ref)
	if !ok || got.Thread != t1 || got.ID == ref.ID || strings.HasPrefix(got.ID, provisional) {
		t.Errorf("after the Ask behind it: Resolve = %v, %v; want the platform's ref", got, ok)
	}

	p.mu.Lock()
	p.failPost = 1
	p.mu.Unlock()
	failed, _ := c.Post(ctx, t2, text("lost"))
	waitIdle(t, c)
	if got, ok := c.Resolve(failed); ok {
		t.Errorf("resolved a failed post: %v", got)
	}
	own := adapters.MessageRef{Thread: t1, ID: "123.456"}
	if got, ok := c.Resolve(own); !ok || got != own {
		t.Errorf("Resolve(platform ref) = %v, %v", got, ok)
	}
	drain(t, c)
}
