package matrix_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/dendrite"
)

// Issue 12: a message's final state is urgent, and the thread reads in
// order for clients with and without threads.

// replaces is where in events the last edit of target whose new body
// contains want is (-1 if none).
func replaces(events []*event.Event, target id.EventID, want string) int {
	at := -1
	for i, evt := range events {
		rel, _ := evt.Content.Raw["m.relates_to"].(map[string]any)
		nc, _ := evt.Content.Raw["m.new_content"].(map[string]any)
		body, _ := nc["body"].(string)
		if rel["rel_type"] == "m.replace" && rel["event_id"] == target.String() && strings.Contains(body, want) {
			at = i
		}
	}
	return at
}

func eventAt(events []*event.Event, evID id.EventID) int {
	for i, evt := range events {
		if evt.ID == evID {
			return i
		}
	}
	return -1
}

// With a 10 s edit interval, a second edit of a message would wait 10 s;
// the final one must not: the turn's final text and its tools' last state
// are in the room before the footer, which follows them at once.
func TestFinalEditsLandBeforeTheFooter(t *testing.T) {
	s := newSolo(t, soloOptions{editInterval: 10 * time.Second})
	room := s.room(s.alice, false)
	th := s.thread(room)
	ctx := context.Background()

	tool := &adapters.Tool{Name: "Bash", Input: "make test", State: adapters.ToolRunning}
	toolRef, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindTool, Tool: tool})
	if err != nil {
		t.Fatal(err)
	}
	tool.Elapsed = time.Second
	must(t, s.ad.Direct().Edit(ctx, toolRef, adapters.Message{Kind: adapters.KindTool, Tool: tool})) // the first edit goes at once
	statusID := s.botEventWith(room, id.EventID(th.Thread), "**Bash**")
	s.waitEdit(room, statusID, "· 1s") // so the next edit of the line is paced
	tool.State, tool.Elapsed, tool.Preview = adapters.ToolOK, 2*time.Second, "all tests passed"
	must(t, s.ad.Direct().Edit(ctx, toolRef, adapters.Message{Kind: adapters.KindTool, Tool: tool})) // paced: 10 s

	ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: "first words"})
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: "first words and then some"}))
	s.waitEdit(room, id.EventID(ref.ID), "then some")
	must(t, s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: "the whole answer, complete", Final: true}))
	// A final edit lands by itself, not only when a footer flushes the
	// thread: the next text message comes after it.
	next, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: "a second message", Final: true})
	if err != nil {
		t.Fatal(err)
	}
	footer, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindFooter, Text: "✓ 2.1s · $0.01"})
	if err != nil {
		t.Fatal(err)
	}

	// Events reach alice in timeline order: once she has the footer, she
	// has everything before it.
	footerID := id.EventID(footer.ID)
	var events []*event.Event
	if !s.alice.WaitFor(wait, func() bool {
		events = s.alice.Events(room)
		return eventAt(events, footerID) >= 0
	}) {
		t.Fatal("the footer never arrived")
	}
	at := eventAt(events, footerID)
	if i, n := replaces(events, id.EventID(ref.ID), "the whole answer, complete"), eventAt(events, id.EventID(next.ID)); i < 0 || i > n || n > at {
		t.Errorf("the final text's edit is at %d, the next message at %d, the footer at %d (-1: not in the room yet)", i, n, at)
	}
	if i := replaces(events, statusID, "all tests passed"); i < 0 || i > at {
		t.Errorf("the tool's done state is at %d, the footer at %d (-1: not in the room yet)", i, at)
	}
	for _, m := range s.alice.Thread(room, id.EventID(th.Thread)) {
		if m.ID.String() == ref.ID && m.Body != "the whole answer, complete" {
			t.Errorf("the text reads %q when the footer is in", m.Body)
		}
	}
}

// waitEdit waits until alice has an edit of target whose body contains want.
func (s *solo) waitEdit(room id.RoomID, target id.EventID, want string) {
	s.t.Helper()
	if !s.alice.WaitFor(wait, func() bool { return replaces(s.alice.Events(room), target, want) >= 0 }) {
		s.t.Fatalf("no edit of %s with %q", target, want)
	}
}

// botEventWith waits for the first bot message in the thread whose original
// body contains want.
func (s *solo) botEventWith(room id.RoomID, root id.EventID, want string) id.EventID {
	s.t.Helper()
	var found id.EventID
	if !s.alice.WaitFor(wait, func() bool {
		for _, evt := range s.alice.Events(room) {
			body, _ := evt.Content.Raw["body"].(string)
			rel, _ := evt.Content.Raw["m.relates_to"].(map[string]any)
			if evt.Sender == s.botUser.ID && strings.Contains(body, want) && rel["rel_type"] == "m.thread" && rel["event_id"] == root.String() {
				found = evt.ID
				return true
			}
		}
		return false
	}) {
		s.t.Fatalf("no bot message with %q in the thread", want)
	}
	return found
}

// Every bot message in a thread falls back (for clients without threads)
// to replying to the thread's latest event: the root only for the first,
// then the bot's previous message, or a person's message it received.
func TestThreadFallbackRepliesToTheLatestEvent(t *testing.T) {
	s := newSolo(t, soloOptions{})
	room := s.room(s.alice, false)
	th := s.thread(room)
	root := id.EventID(th.Thread)
	ctx := context.Background()
	post := func(text string) id.EventID {
		t.Helper()
		ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return id.EventID(ref.ID)
	}
	first, second := post("one"), post("two")
	said := s.alice.SendText(room, "and another thing", "", root)
	s.until(func(ev adapters.Event) bool { return ev.ID() == said.String() })
	third := post("three")
	if _, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindTool, Tool: &adapters.Tool{Name: "Read", Input: "go.mod"}}); err != nil {
		t.Fatal(err)
	}
	otherRoot := s.thread(room)
	fourth := post("four")
	otherFirst, err := s.ad.Direct().Post(ctx, otherRoot, adapters.Message{Kind: adapters.KindText, Text: "other thread"})
	if err != nil {
		t.Fatal(err)
	}
	var status id.EventID
	if !s.alice.WaitFor(wait, func() bool {
		for _, evt := range s.alice.Events(room) {
			if body, _ := evt.Content.Raw["body"].(string); evt.Sender == s.botUser.ID && strings.Contains(body, "**Read**") {
				status = evt.ID
			}
		}
		return status != "" && eventAt(s.alice.Events(room), id.EventID(otherFirst.ID)) >= 0
	}) {
		t.Fatal("the bot's messages did not all arrive")
	}
	for _, c := range []struct {
		name        string
		msg         id.EventID
		root, reply id.EventID
	}{
		{"first reply", first, root, root},
		{"second reply", second, root, first},
		{"after alice spoke", third, root, said},
		{"tool status", status, root, third},
		{"after the tool", fourth, root, status},
		{"first in another thread", id.EventID(otherFirst.ID), id.EventID(otherRoot.Thread), id.EventID(otherRoot.Thread)},
	} {
		t.Run(c.name, func(t *testing.T) {
			rel := relatesTo(t, s.alice, room, c.msg)
			inReply, _ := rel["m.in_reply_to"].(map[string]any)
			if rel["rel_type"] != "m.thread" || rel["event_id"] != c.root.String() || rel["is_falling_back"] != true || inReply["event_id"] != c.reply.String() {
				t.Errorf("m.relates_to = %v; want a thread at %s falling back to %s", rel, c.root, c.reply)
			}
		})
	}
}

func relatesTo(t *testing.T, c *dendrite.Client, room id.RoomID, evID id.EventID) map[string]any {
	t.Helper()
	for _, evt := range c.Events(room) {
		if evt.ID == evID {
			rel, _ := evt.Content.Raw["m.relates_to"].(map[string]any)
			return rel
		}
	}
	t.Fatalf("no event %s in the room", evID)
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
