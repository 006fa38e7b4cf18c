package slack_test

import (
	"fmt"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testkit"
)

// TestReadThread: a thread reads back whole and oldest first, paged (two
// messages a page here): the root, people's messages that never mentioned
// the bot (edits as they are now, deletions left out), another bot's, and
// the bot's own text and file marked FromBot. Nothing of another thread or
// of the channel's top level comes back, and limit keeps the last ones.
func TestReadThread(t *testing.T) {
	s := newSoloWith(t, fakeslack.Options{}, func(c *slack.Config) {
		slack.SetCatchUpPage(c, 2)
		c.RateScale = 20 // a dozen reads of Tier 3, in well under a second
	})
	ctx := t.Context()
	th := s.thread()
	other := s.thread()
	s.fs.Reply(alice, general, other.Thread, "secret of another thread")
	s.fs.Post(bob, general, "top-level chatter")

	edited := s.fs.Reply(alice, general, th.Thread, "first try")
	if err := s.fs.EditMessage(alice, general, edited, "no mention, edited"); err != nil {
		t.Fatal(err)
	}
	gone := s.fs.Reply(bob, general, th.Thread, "deleted later")
	s.fs.Reply(bob, general, th.Thread, "a < b & c, says bob")
	if err := s.fs.DeleteMessage(bob, general, gone); err != nil {
		t.Fatal(err)
	}
	s.fs.BotPost(fakeslack.OtherBot{BotID: "B0OTHER001", UserID: "U0OTHER001", AppID: "A0OTHER001", Name: "ci"}, general, th.Thread, "build green")
	if _, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: "The **answer** is 42.", Final: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ad.Direct().PostFile(ctx, th, adapters.OutFile{Name: "report.md", Data: []byte("# report\n")}); err != nil {
		t.Fatal(err)
	}
	s.fs.Reply(alice, general, th.Thread, "thanks")

	want := []string{
		alice + ": a thread",
		alice + ": no mention, edited",
		bob + ": a < b & c, says bob",
		"U0OTHER001: build green",
		"bot U0FAKEBOT1: The **answer** is 42.",
		"bot U0FAKEBOT1: [file: report.md]",
		alice + ": thanks",
	}
	got, err := s.ad.ReadThread(ctx, th, 100)
	if err != nil {
		t.Fatal(err)
	}
	testkit.CheckSaid(t, "whole thread", got, want)
	if got[0].ID != th.Thread || !got[0].At.Before(got[len(got)-1].At) {
		t.Errorf("first message %s at %v, last at %v: want the root first, oldest first", got[0].ID, got[0].At, got[len(got)-1].At)
	}
	for _, limit := range []int{3, 1} {
		got, err := s.ad.ReadThread(ctx, th, limit)
		if err != nil {
			t.Fatal(err)
		}
		testkit.CheckSaid(t, fmt.Sprintf("limit %d", limit), got, want[len(want)-limit:])
	}
	if calls := s.fs.Calls("conversations.history"); len(calls) != 0 {
		t.Errorf("ReadThread read the channel's history (%d calls)", len(calls))
	}
	for _, c := range s.fs.Calls("conversations.replies") {
		if c.Params["ts"] != th.Thread {
			t.Errorf("conversations.replies of %v, want only thread %s", c.Params["ts"], th.Thread)
		}
	}
	s.noViolations()
}
