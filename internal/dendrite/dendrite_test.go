package dendrite

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

const wait = 15 * time.Second

// pair starts a server with alice and bob in one room that alice created.
func pair(t *testing.T, opts ClientOptions, room RoomOptions) (alice, bob *Client, roomID id.RoomID) {
	t.Helper()
	s := Start(t)
	alice = s.Client(t, s.Register(t, "alice"), opts)
	bob = s.Client(t, s.Register(t, "bob"), opts)
	if alice.User.ID != id.NewUserID("alice", s.ServerName) {
		t.Fatalf("alice is %s", alice.User.ID)
	}
	roomID = alice.CreateRoom(room)
	if !slices.Contains(room.Invite, bob.User.ID) {
		alice.Invite(roomID, bob.User.ID)
	}
	if !bob.WaitFor(wait, func() bool { return bob.Membership(roomID, bob.User.ID) == event.MembershipInvite }) {
		t.Fatal("bob never saw his invite")
	}
	bob.Join(roomID)
	if !alice.WaitFor(wait, func() bool { return alice.Membership(roomID, bob.User.ID) == event.MembershipJoin }) {
		t.Fatal("alice never saw bob join")
	}
	return alice, bob, roomID
}

// waitThread waits until c sees n messages in the thread and returns them.
func waitThread(t *testing.T, c *Client, room id.RoomID, root id.EventID, ok func([]Message) bool) []Message {
	t.Helper()
	var msgs []Message
	if !c.WaitFor(wait, func() bool { msgs = c.Thread(room, root); return ok(msgs) }) {
		t.Fatalf("%s: thread %s never got there; it has %+v", c.User.ID, root, msgs)
	}
	return msgs
}

func eventByID(c *Client, room id.RoomID, evtID id.EventID) *event.Event {
	for _, evt := range c.Events(room) {
		if evt.ID == evtID {
			return evt
		}
	}
	return nil
}

func TestThreadMentionEditReactionPoll(t *testing.T) {
	t.Parallel()
	alice, bob, room := pair(t, ClientOptions{}, RoomOptions{Name: "ops"})

	root := alice.SendText(room, "deploy <b>now</b>", bob.User.ID, "")
	reply := alice.SendText(room, "with care", "", root)
	waitThread(t, bob, room, root, func(m []Message) bool { return len(m) == 2 })

	// What bob's client receives is what Element would have sent.
	got := eventByID(bob, room, root).Content.AsMessage()
	if !got.Mentions.Has(bob.User.ID) || got.Body != "bob: deploy <b>now</b>" ||
		got.FormattedBody != `<a href="https://matrix.to/#/@bob:localhost">bob</a>: deploy &lt;b&gt;now&lt;/b&gt;` {
		t.Errorf("mention: %+v", got)
	}
	got = eventByID(bob, room, reply).Content.AsMessage()
	if got.Mentions == nil || len(got.Mentions.UserIDs) != 0 || got.RelatesTo.GetThreadParent() != root ||
		!got.RelatesTo.IsFallingBack || got.RelatesTo.GetReplyTo() != root {
		t.Errorf("thread reply: %+v %+v", got, got.RelatesTo)
	}

	// Edits: the author's latest wins; anyone else's is ignored.
	answer := bob.SendText(room, "on it", "", root)
	bob.Edit(room, answer, "on it, 5 min")
	forged := alice.Edit(room, answer, "forged")
	bob.Edit(room, answer, "done")
	waitThread(t, alice, room, root, func(m []Message) bool { return len(m) == 3 && m[2].Edits == 2 })
	if !alice.WaitFor(wait, func() bool { return eventByID(alice, room, forged) != nil }) {
		t.Fatal("alice never saw her own edit")
	}
	msgs := alice.Thread(room, root)
	if m := msgs[2]; m.ID != answer || m.Sender != bob.User.ID || m.Body != "done" || m.Edits != 2 || m.Raw["body"] != "done" {
		t.Errorf("edited message: %+v", m)
	}

	// A reaction shows up on the other side, and goes when taken back.
	reaction := bob.React(room, root, "✅")
	if !alice.WaitFor(wait, func() bool { return len(alice.Reactions(room, root)) == 1 }) {
		t.Fatal("alice never saw bob's reaction")
	}
	if r := alice.Reactions(room, root)[0]; r.Sender != bob.User.ID || r.Content.AsReaction().RelatesTo.Key != "✅" {
		t.Errorf("reaction: %+v", r)
	}
	bob.Redact(room, reaction)
	if !alice.WaitFor(wait, func() bool { return len(alice.Reactions(room, root)) == 0 }) {
		t.Fatal("bob's redacted reaction stayed")
	}

	// A poll in the thread, a vote, and its end.
	poll := alice.SendRaw(room, event.EventUnstablePollStart, map[string]any{
		"m.relates_to": (&event.RelatesTo{}).SetThread(root, root),
		"org.matrix.msc3381.poll.start": map[string]any{
			"kind": "org.matrix.msc3381.poll.disclosed", "max_selections": 1,
			"question": map[string]any{"org.matrix.msc1767.text": "Which?"},
			"answers": []map[string]any{
				{"id": "a1", "org.matrix.msc1767.text": "blue"}, {"id": "a2", "org.matrix.msc1767.text": "green"},
			},
		},
		"org.matrix.msc1767.text": "Which?\n1. blue\n2. green",
	})
	waitThread(t, bob, room, root, func(m []Message) bool { return len(m) == 4 })
	vote := bob.VotePoll(room, poll, "a2")
	var voteEvt *event.Event
	if !alice.WaitFor(wait, func() bool { voteEvt = eventByID(alice, room, vote); return voteEvt != nil }) {
		t.Fatal("alice never saw bob's vote")
	}
	voted, _ := voteEvt.Content.Parsed.(*event.PollResponseEventContent)
	if voted == nil || voted.RelatesTo.GetReferenceID() != poll ||
		!slices.Equal(voted.Response.Answers, []string{"a2"}) {
		t.Errorf("vote: %s %s", voteEvt.Type.Type, voteEvt.Content.VeryRaw)
	}
	alice.SendRaw(room, event.EventUnstablePollEnd, map[string]any{
		"m.relates_to":                map[string]any{"rel_type": "m.reference", "event_id": poll},
		"org.matrix.msc3381.poll.end": map[string]any{},
		"org.matrix.msc1767.text":     "green won",
	})
	msgs = waitThread(t, bob, room, root, func(m []Message) bool { return len(m) == 5 })
	if msgs[3].Type != event.EventUnstablePollStart || msgs[3].Body != "Which?\n1. blue\n2. green" || msgs[4].Body != "green won" {
		t.Errorf("poll in thread: %+v", msgs[3:])
	}
}

func TestMedia(t *testing.T) {
	t.Parallel()
	alice, bob, room := pair(t, ClientOptions{}, RoomOptions{Name: "files"})
	root := alice.SendText(room, "logs", "", "")
	// 1x1 PNG
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
		"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")
	alice.SendImage(room, root, "dot.png", "image/png", png)
	alice.SendFile(room, root, "app.log", "text/plain", []byte("line 1\n"))
	msgs := waitThread(t, bob, room, root, func(m []Message) bool { return len(m) == 3 })

	img := eventByID(bob, room, msgs[1].ID).Content.AsMessage()
	if img.MsgType != event.MsgImage || img.Body != "dot.png" || img.Info.MimeType != "image/png" || img.Info.Width != 1 || img.File != nil {
		t.Errorf("image: %+v %+v", img, img.Info)
	}
	if got := download(t, bob, img.URL); !bytes.Equal(got, png) {
		t.Errorf("downloaded image differs: %q", got)
	}
	if msgs[2].MsgType != event.MsgFile || msgs[2].Body != "app.log" {
		t.Errorf("file: %+v", msgs[2])
	}
}

func download(t *testing.T, c *Client, uri id.ContentURIString) []byte {
	t.Helper()
	mxc, err := uri.Parse()
	if err != nil {
		t.Fatalf("bad media URI %q: %v", uri, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	data, err := c.Matrix.DownloadBytes(ctx, mxc)
	if err != nil {
		t.Fatalf("download %s: %v", uri, err)
	}
	return data
}
