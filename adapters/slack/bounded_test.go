package slack_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// TestMemoryStaysBounded: many threads, each with an answer, a status and
// a decided prompt, leave the adapter's per-message and per-thread maps at
// their bounds, not one entry per turn. What was forgotten still behaves:
// the first prompt's update lands, a click on it reaches the bot (which
// answers that it is no longer open), the latest answer can still be
// edited.
func TestMemoryStaysBounded(t *testing.T) {
	const turns, msgCap, askerCap = 300, 40, 30
	s := newSoloWith(t, fakeslack.Options{}, func(c *slack.Config) {
		c.RateScale = 1000
		c.EditInterval = time.Nanosecond // every pacing time is stale at once
	})
	s.ad.SetCaps(msgCap, askerCap)
	ctx := t.Context()
	var firstPrompt, lastText adapters.MessageRef
	var firstThread adapters.ThreadRef
	for i := range turns {
		// A mention: the adapter learns who asks in the thread.
		th := adapters.ThreadRef{Platform: slack.Platform, Channel: general, Thread: s.fs.Post(alice, general, mention+"a thread")}
		if err := s.ad.Direct().SetStatus(ctx, th, "is thinking…"); err != nil {
			t.Fatal(err)
		}
		ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("answer %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("answer %d, whole", i), Final: true}); err != nil {
			t.Fatal(err)
		}
		p := adapters.Prompt{ID: fmt.Sprintf("p-%d", i), Kind: adapters.PromptApproval, Title: "Bash wants to run",
			Tool: "Bash", Detail: "$ true", Choices: choices(adapters.ChoiceAllow, adapters.ChoiceDeny)}
		pref, err := s.ad.Direct().Ask(ctx, th, p)
		if err != nil {
			t.Fatal(err)
		}
		p.State, p.Outcome = adapters.PromptDecided, "Allowed by "+alice
		if err := s.ad.Direct().UpdatePrompt(ctx, pref, p); err != nil {
			t.Fatal(err)
		}
		if err := s.ad.Direct().SetStatus(ctx, th, ""); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			firstPrompt, firstThread = pref, th
		}
		lastText = ref
	}
	s.waitMessage(general, lastText.ID, fmt.Sprintf("answer %d, whole", turns-1))
	// Every prompt decided and shown so: none is open any more.
	if !s.fs.WaitFor(wait, func() bool {
		_, _, prompts, _ := s.ad.Sizes()
		return prompts == 0
	}) {
		t.Fatal("decided prompts are still held open")
	}
	// Each thread's mention has reached the adapter.
	if !s.fs.WaitFor(wait, func() bool { return s.delivered() >= turns }) {
		t.Fatalf("mentions delivered: %d of %d", s.delivered(), turns)
	}
	msgs, askers, _, editLast := s.ad.Sizes()
	if msgs > msgCap || askers > askerCap || editLast > 2*64 {
		t.Errorf("after %d turns: %d messages (cap %d), %d askers (cap %d), %d pacing times", turns, msgs, msgCap, askers, askerCap, editLast)
	}

	// The first prompt, long forgotten: an update still lands.
	p := adapters.Prompt{ID: "p-0", Kind: adapters.PromptApproval, Title: "Bash wants to run", Tool: "Bash", Detail: "$ true",
		State: adapters.PromptExpired, Outcome: "Expired while nobody answered"}
	if err := s.ad.Direct().UpdatePrompt(ctx, firstPrompt, p); err != nil {
		t.Fatal(err)
	}
	s.waitMessage(general, firstPrompt.ID, "Expired while nobody answered")
	// A stale client's click on it goes to the bot, which knows it is not
	// open; it is not dropped as a forgery.
	click := map[string]any{"action_id": "claudeops_approval_allow", "value": "p-0", "block_id": "approval:p-0"}
	if err := s.fs.ForgeAction(alice, general, firstPrompt.ID, click); err != nil {
		t.Fatal(err)
	}
	if ev := s.firstAction(); ev.Click.PromptID != "p-0" || ev.Thread != firstThread || ev.User.ID != alice {
		t.Errorf("click on the old prompt delivered as %+v", ev)
	}
	// The most recent answer is still remembered and editable.
	if err := s.ad.Direct().Edit(ctx, lastText, adapters.Message{Kind: adapters.KindText, Text: "edited again", Final: true}); err != nil {
		t.Fatal(err)
	}
	s.waitMessage(general, lastText.ID, "edited again")
	s.noViolations()
}

// delivered counts the events delivered so far.
func (s *solo) delivered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// firstAction waits for a click among the events delivered.
func (s *solo) firstAction() adapters.Event {
	s.t.Helper()
	var ev adapters.Event
	if !s.fs.WaitFor(wait, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, e := range s.events {
			if e.Click != nil {
				ev = e
				return true
			}
		}
		return false
	}) {
		s.t.Fatal("no click delivered")
	}
	return ev
}
