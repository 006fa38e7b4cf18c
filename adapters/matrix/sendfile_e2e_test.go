package matrix_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/dendrite"
)

// Hostile input for a posted file: a name that climbs directories and
// breaks its line, a comment with every kind of ping and a link.
const (
	hostileName    = "../../x\n<!here>.md"
	hostileComment = "<!channel> @room <@U123> [x](https://evil) <b>bold</b>"
)

// TestPostFileInThread: the file lands in the thread after what the bot
// posted there before, alice's client downloads exactly the bytes sent,
// its name is made safe and its comment is a plain caption that pings
// nobody. The oracles are alice's client (what she sees) and Dendrite's
// push rules (her notifications): bob's message with the same comment
// highlights her, the bot's file does not, though the bot may notify the
// room as bob may.
func TestPostFileInThread(t *testing.T) {
	s := newSolo(t, soloOptions{})
	room := s.room(s.alice, false)
	s.alice.Invite(room, s.bob.User.ID)
	if !s.bob.WaitFor(wait, func() bool { return s.bob.Membership(room, s.bob.User.ID) == event.MembershipInvite }) {
		t.Fatal("bob never saw his invite")
	}
	s.bob.Join(room)
	s.alice.SetPower(room, s.botUser.ID, 50)
	s.alice.SetPower(room, s.bob.User.ID, 50)
	ref, _ := checkPostFile(t, s, room)

	control := s.bob.SendRaw(room, event.EventMessage, map[string]any{"msgtype": "m.text", "body": hostileComment})
	var got []dendrite.Notification
	if !s.alice.WaitFor(wait, func() bool {
		got = s.alice.Notifications()
		return slices.ContainsFunc(got, func(n dendrite.Notification) bool { return n.Event == control })
	}) {
		t.Fatalf("alice was never notified of bob's message: %+v", got)
	}
	notified := false // the file is a message: it notifies, quietly
	for _, n := range got {
		switch n.Event {
		case control:
			if !n.Highlight {
				t.Error("bob's @room did not highlight alice: the oracle cannot see a ping")
			}
		case id.EventID(ref.ID):
			notified = true
			if n.Highlight {
				t.Error("the bot's file highlighted alice")
			}
		}
	}
	if !notified {
		t.Errorf("no notification of the bot's file %s: the oracle did not judge it", ref.ID)
	}
}

// checkPostFile posts a file after a text in a new thread of room and
// checks what alice sees of it; it returns the file's ref and message.
func checkPostFile(t *testing.T, s *solo, room id.RoomID) (adapters.MessageRef, dendrite.Message) {
	t.Helper()
	th := s.thread(room)
	ctx := t.Context()
	before, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: "Here it comes.", Final: true})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i * 7) // every byte value, NUL and invalid UTF-8 included
	}
	ref, err := s.ad.Direct().PostFile(ctx, th, adapters.OutFile{Name: hostileName, Data: data, Comment: hostileComment})
	if err != nil {
		t.Fatal(err)
	}
	m := s.message(s.alice, th, ref.ID)
	msgs := s.alice.Thread(room, id.EventID(th.Thread))
	if i, j := indexOf(msgs, before.ID), indexOf(msgs, ref.ID); i < 0 || j != i+1 {
		t.Errorf("the file is message %d of the thread, the text before it %d", j, i)
	}
	if m.MsgType != event.MsgFile || m.Raw["filename"] != "x_<!here>.md" {
		t.Errorf("%s %q, want an m.file named x_<!here>.md", m.MsgType, m.Raw["filename"])
	}
	if strings.Contains(m.Body, "@room") || !strings.Contains(m.Body, "[x](https://evil)") || m.FormattedBody != "" {
		t.Errorf("caption %q (formatted %q): want the comment as plain text, @room inert", m.Body, m.FormattedBody)
	}
	if mentions, ok := m.Raw["m.mentions"].(map[string]any); !ok || len(mentions) != 0 {
		t.Errorf("m.mentions %v, want {}", m.Raw["m.mentions"])
	}
	if got := fileData(t, s.alice, m); !bytes.Equal(got, data) {
		t.Errorf("alice downloaded %d bytes, want the %d sent, byte for byte", len(got), len(data))
	}
	return ref, m
}

// TestPostFileOverLimit: the limit is the homeserver's; a file over it is
// refused and nothing is uploaded or posted, one at it goes up.
func TestPostFileOverLimit(t *testing.T) {
	var uploads atomic.Int32
	countUploads := func(next http.RoundTripper) http.RoundTripper {
		return roundTrip(func(r *http.Request) (*http.Response, error) {
			if strings.Contains(r.URL.Path, "/media/") && strings.Contains(r.URL.Path, "/upload") {
				uploads.Add(1)
			}
			return next.RoundTrip(r)
		})
	}
	s := newSolo(t, soloOptions{maxUpload: 4096, transport: countUploads})
	room := s.room(s.alice, false)
	th := s.thread(room)
	ctx := t.Context()
	if n := s.ad.MaxFileBytes(ctx); n != 4096 {
		t.Errorf("MaxFileBytes = %d, want the homeserver's 4096", n)
	}
	if _, err := s.ad.Direct().PostFile(ctx, th, adapters.OutFile{Name: "big.bin", Data: make([]byte, 4097)}); err == nil {
		t.Error("a file over the homeserver's limit was taken")
	}
	if n := uploads.Load(); n != 0 {
		t.Errorf("%d uploads for a refused file", n)
	}
	ref, err := s.ad.Direct().PostFile(ctx, th, adapters.OutFile{Name: "fits.bin", Data: make([]byte, 4096)})
	if err != nil {
		t.Fatalf("a file at the limit: %v", err)
	}
	s.message(s.alice, th, ref.ID)
	for _, m := range s.alice.Thread(room, id.EventID(th.Thread)) {
		if m.Sender == s.botUser.ID && m.ID.String() != ref.ID {
			t.Errorf("the bot posted %s %q", m.MsgType, m.Body)
		}
	}
}
