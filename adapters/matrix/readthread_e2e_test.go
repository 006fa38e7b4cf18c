package matrix_test

import (
	"fmt"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/testkit"
)

// TestReadThread: see checkReadThread.
func TestReadThread(t *testing.T) { checkReadThread(t, false) }

// checkReadThread: a thread reads back from Dendrite oldest first, root
// included: alice's and mallory's messages that mention nobody (an edit
// as its latest text, unless someone else sent it; a redacted message
// left out), the bot's streamed message as its last edit, marked FromBot;
// no poll, reaction or edit as a message of its own, nothing of another
// thread or of the room's top level. limit keeps the last ones.
func checkReadThread(t *testing.T, encrypted bool) {
	s := newSolo(t, soloOptions{crypto: encrypted})
	ctx := t.Context()
	room := s.room(s.alice, encrypted)
	mallory := s.srv.Client(t, s.srv.Register(t, "mallory"), dendrite.ClientOptions{Crypto: encrypted})
	s.alice.Invite(room, mallory.User.ID)
	if !mallory.WaitFor(wait, func() bool { return mallory.Membership(room, mallory.User.ID) == event.MembershipInvite }) {
		t.Fatal("mallory never saw her invite")
	}
	mallory.Join(room)
	if !s.alice.WaitFor(wait, func() bool { return s.alice.Membership(room, mallory.User.ID) == event.MembershipJoin }) {
		t.Fatal("alice never saw mallory join")
	}

	root := s.alice.SendText(room, "a thread about the release", "", "")
	th := adapters.ThreadRef{Platform: matrix.Platform, Channel: room.String(), Thread: root.String()}
	other := s.alice.SendText(room, "another thread", "", "")
	s.alice.SendText(room, "secret of another thread", "", other)
	s.alice.SendText(room, "top-level chatter", "", "")
	plain := s.alice.SendText(room, "no mention from alice", "", root)
	first := mallory.SendText(room, "first try", "", root)
	mallory.Edit(room, first, "mallory, edited")
	mallory.Edit(room, plain, "forged by mallory: only a message's sender may edit it")
	oops := s.alice.SendText(room, "oops, a secret", "", root)
	s.alice.Redact(room, oops)
	s.alice.React(room, root, "👍")
	s.alice.SendRaw(room, event.EventUnstablePollStart, map[string]any{
		"org.matrix.msc1767.text": "Ship it?",
		"org.matrix.msc3381.poll.start": map[string]any{
			"question": map[string]any{"org.matrix.msc1767.text": "Ship it?"}, "kind": "org.matrix.msc3381.poll.disclosed",
			"max_selections": 1, "answers": []any{map[string]any{"id": "y", "org.matrix.msc1767.text": "yes"}},
		},
		"m.relates_to": map[string]any{"rel_type": "m.thread", "event_id": root},
	})
	ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: "Wor"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Working", "Working on it"} {
		if err := s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: "Working on it: done.", Final: true}); err != nil {
		t.Fatal(err)
	}
	// A final text is held briefly for a footer (outbox.Editor.Hold);
	// none comes here, so it lands at the hold's end.
	if !s.alice.WaitFor(wait, func() bool { return s.message(s.alice, th, ref.ID).Body == "Working on it: done." }) {
		t.Fatal("the final text never showed")
	}
	last := s.alice.SendText(room, "thanks", "", root)
	// The bot has synced (and has the keys of) everything up to here.
	s.until(func(ev adapters.Event) bool { return ev.ID() == first.String() })
	s.until(func(ev adapters.Event) bool { return ev.ID() == last.String() })

	alice, mal := s.alice.User.ID.String(), mallory.User.ID.String()
	want := []string{
		alice + ": a thread about the release",
		alice + ": no mention from alice",
		mal + ": mallory, edited",
		"bot " + s.botUser.ID.String() + ": Working on it: done.",
		alice + ": thanks",
	}
	got, err := s.ad.ReadThread(ctx, th, 100)
	if err != nil {
		t.Fatal(err)
	}
	testkit.CheckSaid(t, "whole thread", got, want)
	if len(got) > 0 && (got[0].ID != root.String() || got[len(got)-1].ID != last.String()) {
		t.Errorf("read %s … %s, want %s … %s", got[0].ID, got[len(got)-1].ID, root, last)
	}
	for _, limit := range []int{2, 1} {
		got, err := s.ad.ReadThread(ctx, th, limit)
		if err != nil {
			t.Fatal(err)
		}
		testkit.CheckSaid(t, fmt.Sprintf("limit %d", limit), got, want[len(want)-limit:])
	}
	if got, err := s.ad.ReadThread(ctx, adapters.ThreadRef{Platform: matrix.Platform, Channel: room.String(), Thread: other.String()}, 100); err != nil ||
		len(got) != 2 || got[1].Text != "secret of another thread" {
		t.Errorf("the other thread read back as %+v, %v", got, err)
	}
}
