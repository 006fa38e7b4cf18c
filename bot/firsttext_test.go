package bot

import (
	"context"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/outbox"
)

// gatedPlatform takes each post when gate lets it.
type gatedPlatform struct{ gate chan struct{} }

func (p *gatedPlatform) Name() string { return "gated" }
func (p *gatedPlatform) Run(ctx context.Context, _ func(context.Context, adapters.Event) error) error {
	<-ctx.Done()
	return nil
}
func (p *gatedPlatform) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	<-p.gate
	return adapters.MessageRef{Thread: t, ID: "p1"}, nil
}
func (p *gatedPlatform) Edit(context.Context, adapters.MessageRef, adapters.Message) error {
	return nil
}
func (p *gatedPlatform) Ask(context.Context, adapters.ThreadRef, adapters.Prompt) (adapters.MessageRef, error) {
	return adapters.MessageRef{}, nil
}
func (p *gatedPlatform) UpdatePrompt(context.Context, adapters.MessageRef, adapters.Prompt) error {
	return nil
}

// TestFirstTextTimedToThePost: a first text carried by a mailroom is told
// once the platform has it, not when it is handed over, and once, whether
// the post lands after it was noted or before.
func TestFirstTextTimedToThePost(t *testing.T) {
	thread := adapters.ThreadRef{Platform: "gated", Channel: "c", Thread: "t"}
	for _, postFirst := range []bool{false, true} {
		obs := newCountingObserver()
		f := newFirstTexts(obs, time.Now)
		p := &gatedPlatform{gate: make(chan struct{})}
		c := outbox.NewMailroom(p, nil)
		c.OnPosted(f.posted)
		asked := time.Now()
		ref, err := c.Post(context.Background(), thread, adapters.Message{Kind: adapters.KindText, Text: "first words"})
		if err != nil {
			t.Fatal(err)
		}
		if postFirst {
			close(p.gate)
			for !c.Posted(ref) {
				time.Sleep(time.Millisecond)
			}
		}
		f.handed(ref, asked, c)
		if !postFirst {
			if n := obs.counts()["first text"]; n != 0 {
				t.Errorf("told %d times before the platform had the post", n)
			}
			close(p.gate)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		if n := obs.counts()["first text"]; n != 1 {
			t.Errorf("post first %v: told %d times, want 1", postFirst, n)
		}
	}
	obs := newCountingObserver()
	newFirstTexts(obs, time.Now).handed(adapters.MessageRef{Thread: thread, ID: "x"}, time.Now(), nil)
	if n := obs.counts()["first text"]; n != 1 {
		t.Errorf("an immediate adapter's text told %d times, want 1", n)
	}
}
