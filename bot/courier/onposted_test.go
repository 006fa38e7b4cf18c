package courier

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

// TestOnPosted: a post is told only once the platform has taken it (not
// when Post hands out its ref), a failed post is not told, and the later
// edit that makes it after all is, under the id Post handed out.
func TestOnPosted(t *testing.T) {
	p := &platform{}
	c := New(p, nil)
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

// waitIdle waits until the courier's lanes are empty (Idle).
func waitIdle(t *testing.T, c *Courier) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.busyLocked() > 0 {
		c.idle.Wait()
	}
}
