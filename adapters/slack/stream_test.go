package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	slackadapter "github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// TestStreamStopControlBecomesFooter: a native stream's Stop control is a
// message of its own; when the stream ends with its final text, the turn's
// footer takes that message's place (one chat.update, no chat.delete and
// chat.postMessage), and anything else posted first removes it, so no dead
// Stop button is left in the thread either way.
func TestStreamStopControlBecomesFooter(t *testing.T) {
	for _, c := range []struct {
		name    string
		next    adapters.Message
		deletes int
	}{
		{"footer", adapters.Message{Kind: adapters.KindFooter, Text: "— ✓ 1s · 1 turn"}, 0},
		{"notice", adapters.Message{Kind: adapters.KindNotice, Text: "a notice"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSoloWith(t, fakeslack.Options{Streaming: true}, func(c *slackadapter.Config) { c.Streaming = true })
			th := adapters.ThreadRef{Platform: slackadapter.Platform, Channel: general, Thread: s.fs.Post(alice, general, mention+"a thread")}
			// Alice's message reached the adapter: it knows whom the stream is for.
			if !s.fs.WaitFor(wait, func() bool {
				s.mu.Lock()
				defer s.mu.Unlock()
				return len(s.events) > 0
			}) {
				t.Fatal("alice's message was not delivered")
			}
			ctx := context.Background()
			ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: "the answer"})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(s.fs.Calls("chat.startStream")); n != 1 {
				t.Fatalf("chat.startStream calls: %d", n)
			}
			if err := s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: "the answer, whole", Final: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ad.Direct().Post(ctx, th, c.next); err != nil {
				t.Fatal(err)
			}
			if !s.fs.WaitFor(wait, func() bool {
				for _, m := range s.fs.Thread(th.Channel, th.Thread) {
					if m.BotID != "" && strings.Contains(m.Text+string(m.Blocks), c.next.Text) {
						return true
					}
				}
				return false
			}) {
				t.Fatalf("%s never shown", c.name)
			}
			var bot []string
			for _, m := range s.fs.Thread(th.Channel, th.Thread) {
				if m.BotID == "" {
					continue
				}
				if len(m.ActionIDs()) > 0 {
					t.Errorf("a button is left in the thread: %q %s", m.Text, m.Blocks)
				}
				bot = append(bot, m.MarkdownText+m.Text)
			}
			if len(bot) != 2 || !strings.Contains(bot[0], "the answer, whole") {
				t.Errorf("bot messages: %q", bot)
			}
			if n := len(s.fs.Calls("chat.delete")); n != c.deletes {
				t.Errorf("chat.delete calls: %d, want %d", n, c.deletes)
			}
		})
	}
}
