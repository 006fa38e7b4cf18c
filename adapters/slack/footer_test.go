package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	slackadapter "github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// TestFinalTextHeldForTheFooter: a text's final edit waits briefly for the
// turn's footer, which then rides in the text's message (one chat.update,
// no chat.postMessage); whatever else comes first sends the final text
// before it, and nothing is lost: the final text lands at the hold's
// deadline, or when the adapter closes. The fake Slack is the oracle: what
// each message shows and which calls reached it.
func TestFinalTextHeldForTheFooter(t *testing.T) {
	const final = "the whole answer, final"
	cases := []struct {
		name string
		hold time.Duration
		// then acts once the final edit is given; it returns the text
		// the thread's last bot message must show.
		then func(t *testing.T, ad *slackadapter.Adapter, th adapters.ThreadRef) string
		// messages: the bot's messages in the thread at the end;
		// updates: chat.update calls after the post.
		messages, updates int
	}{
		{"the footer rides in the text's message", time.Minute, func(t *testing.T, ad *slackadapter.Adapter, th adapters.ThreadRef) string {
			post(t, ad, th, adapters.Message{Kind: adapters.KindFooter, Text: "✓ 1.0s · $0.01 · 1 turn"})
			return "1 turn"
		}, 1, 1},
		{"a notice posted first sends the final text before it", time.Minute, func(t *testing.T, ad *slackadapter.Adapter, th adapters.ThreadRef) string {
			post(t, ad, th, adapters.Message{Kind: adapters.KindNotice, Text: "Queued: next"})
			return "Queued: next"
		}, 2, 1},
		{"the deadline sends it", 100 * time.Millisecond, func(*testing.T, *slackadapter.Adapter, adapters.ThreadRef) string {
			return final
		}, 1, 1},
		{"closing sends it", time.Minute, func(_ *testing.T, ad *slackadapter.Adapter, _ adapters.ThreadRef) string {
			ad.Close()
			return final
		}, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSoloWith(t, fakeslack.Options{NoBotEcho: true}, func(cfg *slackadapter.Config) { cfg.FinalHold = c.hold })
			ctx := context.Background()
			th := s.thread()
			ref := post(t, s.ad, th, adapters.Message{Kind: adapters.KindText, Text: "the whole"})
			before := len(s.fs.Calls("chat.update"))
			if err := s.ad.Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: final, Final: true}); err != nil {
				t.Fatal(err)
			}
			last := c.then(t, s.ad, th)
			if !s.fs.WaitFor(wait, func() bool {
				msgs := s.botMessages(th)
				return len(msgs) == c.messages && strings.Contains(msgs[len(msgs)-1].VisibleText(), last) &&
					strings.Contains(msgs[0].VisibleText(), final) && len(msgs[0].ActionIDs()) == 0
			}) {
				t.Fatalf("the thread shows:\n%s", s.dump(th))
			}
			if c.messages == 2 { // the final text reached Slack before the notice
				ups, posts := s.fs.Calls("chat.update"), s.fs.Calls("chat.postMessage")
				if !ups[len(ups)-1].Time.Before(posts[len(posts)-1].Time) {
					t.Errorf("the final text (%v) came after the notice (%v)", ups[len(ups)-1].Time, posts[len(posts)-1].Time)
				}
			}
			time.Sleep(200 * time.Millisecond) // nothing more comes
			if n := len(s.fs.Calls("chat.update")) - before; n != c.updates {
				t.Errorf("%d chat.update after the post, want %d", n, c.updates)
			}
			if msgs := s.botMessages(th); len(msgs) != c.messages {
				t.Errorf("%d messages, want %d:\n%s", len(msgs), c.messages, s.dump(th))
			}
			s.noViolations()
		})
	}
}

// post posts m through the adapter and waits until Slack holds it.
func post(t *testing.T, ad *slackadapter.Adapter, th adapters.ThreadRef, m adapters.Message) adapters.MessageRef {
	t.Helper()
	ctx := context.Background()
	ref, err := ad.Post(ctx, th, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Await(ctx, ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

func (s *solo) dump(th adapters.ThreadRef) string {
	var b strings.Builder
	for _, m := range s.botMessages(th) {
		b.WriteString(m.VisibleText() + " " + strings.Join(m.ActionIDs(), ",") + "\n---\n")
	}
	return b.String()
}
