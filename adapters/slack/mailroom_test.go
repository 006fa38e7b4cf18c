package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// TestNoCallWaitsOnSlack: the adapter's Post, Edit and SetStatus return
// while Slack holds chat.postMessage (adapters.Adapter's contract); the
// post's ref is provisional, and once Slack answers the thread shows one
// message with its final text, and the lane drains.
func TestNoCallWaitsOnSlack(t *testing.T) {
	s := newSolo(t)
	ctx := context.Background()
	th := s.thread()
	hold := s.fs.Hold("chat.postMessage")

	start := time.Now()
	ref, err := s.ad.Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: "held back"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"held back, more", "held back, whole"} {
		if err := s.ad.Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: text, Final: text == "held back, whole"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ad.SetStatus(ctx, th, ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the calls took %v while Slack held the post", d)
	}
	if s.ad.Posted(ref) {
		t.Fatal("the post was made while Slack held it")
	}
	if !s.fs.WaitFor(wait, func() bool { return hold.Arrived() > 0 }) {
		t.Fatal("no chat.postMessage was made")
	}
	hold.Release()
	if err := s.ad.Await(ctx, ref); err != nil {
		t.Fatal(err)
	}
	var last string
	if !s.fs.WaitFor(wait, func() bool {
		msgs := s.botMessages(th)
		if len(msgs) == 0 {
			return false
		}
		last = msgs[len(msgs)-1].VisibleText()
		return len(msgs) == 1 && strings.Contains(last, "held back, whole")
	}) {
		t.Fatalf("the thread shows %q, want one message with the final text", last)
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := s.ad.Drain(dctx); err != nil {
		t.Errorf("calls still queued: %v", err)
	}
	s.noViolations()
}
