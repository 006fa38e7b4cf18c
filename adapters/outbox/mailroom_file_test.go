package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// filePlatform is the fake platform that can also post files.
type filePlatform struct{ platform }

func (p *filePlatform) MaxFileBytes(context.Context) int64 { return 10 }

func (p *filePlatform) PostFile(ctx context.Context, t adapters.ThreadRef, f adapters.OutFile) (adapters.MessageRef, error) {
	if err := p.record(ctx, "file "+t.Thread+" "+f.Name); err != nil {
		return adapters.MessageRef{}, err
	}
	return adapters.MessageRef{Thread: t, ID: "f"}, nil
}

// TestPostFileInOrder: a file lands after the text queued before it, and
// the edit queued after it is not collapsed over it.
func TestPostFileInOrder(t *testing.T) {
	p := &filePlatform{}
	p.entered = make(chan string, 8)
	c := NewMailroom(p, nil)
	ctx := context.Background()
	p.hold()
	a, _ := c.Post(ctx, t1, text("before"))
	<-p.entered // the post is being made: nothing collapses into it now
	done := make(chan error, 1)
	go func() {
		_, err := c.PostFile(ctx, t1, adapters.OutFile{Name: "report.md", Data: []byte("x")})
		done <- err
	}()
	waitQueued(t, c, t1, 1)
	_ = c.Edit(ctx, a, text("before, edited"))
	p.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	drain(t, c)
	want := []string{"post t1 before", "file t1 report.md", "edit m1 before, edited"}
	if got := p.log(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
	if n := c.MaxFileBytes(ctx); n != 10 {
		t.Errorf("MaxFileBytes = %d, want the adapter's 10", n)
	}
}

// TestPostFileUnsupported: an adapter without files says so; nothing queues.
func TestPostFileUnsupported(t *testing.T) {
	p := &platform{}
	c := NewMailroom(p, nil)
	if _, err := c.PostFile(context.Background(), t1, adapters.OutFile{Name: "x"}); err == nil {
		t.Fatal("PostFile through an adapter that cannot post files succeeded")
	}
	if n := c.MaxFileBytes(context.Background()); n != 0 {
		t.Errorf("MaxFileBytes = %d, want 0", n)
	}
	drain(t, c)
	if got := p.log(); len(got) != 0 {
		t.Errorf("calls %q, want none", got)
	}
}

// waitQueued waits until th's lane holds n jobs waiting.
func waitQueued(t *testing.T, c *Mailroom, th adapters.ThreadRef, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		l := c.lanes[th]
		got := 0
		if l != nil {
			got = len(l.jobs)
		}
		c.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lane holds %d jobs, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}
