package matrix_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/store"
)

// solo is the Matrix adapter alone on a real Dendrite, without the bot:
// what it delivers is recorded, what it posts is read from the users'
// clients. Its tests need no CLI.
type solo struct {
	t       testing.TB
	srv     *dendrite.Server
	ad      *matrix.Adapter
	botUser *dendrite.User
	// cryptoDB is the bot's crypto state, for a test that tampers with it.
	cryptoDB string
	alice    *dendrite.Client
	bob      *dendrite.Client

	mu     sync.Mutex
	events []adapters.Event
	seen   int // events already returned by until
}

type soloOptions struct {
	crypto bool
	// transport, when set, sits between the adapter and Dendrite.
	transport func(http.RoundTripper) http.RoundTripper
	// editInterval replaces the 100 ms edit interval.
	editInterval time.Duration
	// observer, when set, is told of the adapter's requests.
	observer adapters.APIObserver
	// maxUpload, when set, is the homeserver's upload limit.
	maxUpload int64
}

func newSolo(t testing.TB, o soloOptions) *solo {
	t.Helper()
	srv := dendrite.StartWith(t, dendrite.Options{MaxUploadBytes: o.maxUpload})
	s := &solo{t: t, srv: srv, botUser: srv.Register(t, "claude")}
	copts := dendrite.ClientOptions{Crypto: o.crypto}
	s.alice = srv.Client(t, srv.Register(t, "alice"), copts)
	s.bob = srv.Client(t, srv.Register(t, "bob"), copts)
	dir := t.TempDir()
	s.cryptoDB = filepath.Join(dir, "crypto.db")
	st, err := store.Open(context.Background(), filepath.Join(dir, "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: time.Minute}
	if o.transport != nil {
		hc.Transport = o.transport(http.DefaultTransport)
	}
	interval := 100 * time.Millisecond
	if o.editInterval > 0 {
		interval = o.editInterval
	}
	ad, err := matrix.New(matrix.Config{
		Homeserver: srv.URL, UserID: s.botUser.ID.String(),
		AccessToken: s.botUser.AccessToken, DeviceID: s.botUser.DeviceID.String(), Password: s.botUser.Password,
		CryptoDB: s.cryptoDB, RecoveryKeyFile: filepath.Join(dir, "recovery-key"),
		MayInvite: func(string, string) bool { return true }, EditInterval: interval, State: matrix.StoreState{Store: st}, PrivateDB: store.MakePrivate, HTTPClient: hc,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.ad = ad
	if o.observer != nil {
		ad.SetAPIObserver(o.observer)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ad.Run(ctx, func(_ context.Context, ev adapters.Event) error {
			s.mu.Lock()
			s.events = append(s.events, ev)
			s.mu.Unlock()
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done; ad.Close(); st.Close() })
	return s
}

// room: c makes a room, invites the bot, and waits until it has joined.
func (s *solo) room(c *dendrite.Client, encrypted bool) id.RoomID {
	s.t.Helper()
	room := c.CreateRoom(dendrite.RoomOptions{Name: "r", Encrypted: encrypted, Invite: []id.UserID{s.botUser.ID}})
	if !c.WaitFor(wait, func() bool { return c.Membership(room, s.botUser.ID) == event.MembershipJoin }) {
		s.t.Fatalf("the bot did not join %s", room)
	}
	return room
}

// thread: alice's top-level message in room, as a thread.
func (s *solo) thread(room id.RoomID) adapters.ThreadRef {
	root := s.alice.SendText(room, "a thread", "", "")
	return adapters.ThreadRef{Platform: matrix.Platform, Channel: room.String(), Thread: root.String()}
}

// until waits for a delivered event that done accepts and returns the
// events delivered up to it since the last call.
func (s *solo) until(done func(adapters.Event) bool) []adapters.Event {
	s.t.Helper()
	var got []adapters.Event
	if !s.alice.WaitFor(wait, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := s.seen; i < len(s.events); i++ {
			if done(s.events[i]) {
				got = append([]adapters.Event(nil), s.events[s.seen:i+1]...)
				s.seen = i + 1
				return true
			}
		}
		return false
	}) {
		s.t.Fatalf("no such event among %d delivered", len(s.events))
	}
	return got
}

// barrier: c sends a message in room and waits until it was delivered, so
// that everything c sent there before it was processed.
func (s *solo) barrier(c *dendrite.Client, room id.RoomID) []adapters.Event {
	s.t.Helper()
	evID := c.SendText(room, "barrier", "", "")
	return s.until(func(ev adapters.Event) bool { return ev.ID() == evID.String() })
}

func actions(evs []adapters.Event) []adapters.Event {
	var out []adapters.Event
	for _, ev := range evs {
		if ev.Click != nil {
			out = append(out, ev)
		}
	}
	return out
}

// ownKeys are the bot's reactions on target as c sees them, in order.
func (s *solo) ownKeys(c *dendrite.Client, room id.RoomID, target id.EventID) string {
	var keys []string
	for _, r := range c.Reactions(room, target) {
		if r.Sender == s.botUser.ID {
			keys = append(keys, r.Content.AsReaction().RelatesTo.Key)
		}
	}
	return strings.Join(keys, " ")
}

// message is the bot's message id in c's view of the thread.
func (s *solo) message(c *dendrite.Client, th adapters.ThreadRef, evID string) dendrite.Message {
	s.t.Helper()
	var found dendrite.Message
	if !c.WaitFor(wait, func() bool {
		for _, m := range c.Thread(id.RoomID(th.Channel), id.EventID(th.Thread)) {
			// In an encrypted room it shows first as received, with no
			// body; its keys may come a moment later (a loaded machine).
			if m.ID.String() == evID && m.Type != event.EventEncrypted {
				found = m
				return true
			}
		}
		return false
	}) {
		s.t.Fatalf("no message %s in the thread", evID)
	}
	return found
}

var approval = adapters.Prompt{
	ID: "p-approve", Kind: adapters.PromptApproval, Title: "#1 · Bash wants to run", Tool: "Bash",
	Detail: "$ make deploy", Choices: choices(adapters.ChoiceAllow, adapters.ChoiceAllowThread, adapters.ChoiceDeny),
}

func choices(ids ...adapters.ChoiceID) []adapters.Choice {
	var out []adapters.Choice
	for _, c := range adapters.ApprovalChoices {
		for _, id := range ids {
			if c.ID == id {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestClickFromAnotherRoomIsIgnored: a reaction, a keycap or a poll vote
// counts only in the room of its prompt. Bob, in a room of his own with
// the bot, names the event ids of alice's prompts: nothing is delivered.
func TestClickFromAnotherRoomIsIgnored(t *testing.T) {
	s := newSolo(t, soloOptions{})
	roomA := s.room(s.alice, false)
	roomB := s.room(s.bob, false)
	th := s.thread(roomA)
	ctx := t.Context()
	ap, err := s.ad.Direct().Ask(ctx, th, approval)
	if err != nil {
		t.Fatal(err)
	}
	q := adapters.Prompt{ID: "p-question", Kind: adapters.PromptQuestion, Title: "Claude asks", Questions: []adapters.Question{
		{Text: "Which one?", Options: []adapters.Option{{Label: "Red"}, {Label: "Blue"}}},
	}}
	qp, err := s.ad.Direct().Ask(ctx, th, q)
	if err != nil {
		t.Fatal(err)
	}
	var poll id.EventID
	if !s.alice.WaitFor(wait, func() bool {
		for _, m := range s.alice.Thread(roomA, id.EventID(th.Thread)) {
			if m.Type == event.EventUnstablePollStart {
				poll = m.ID
			}
		}
		return poll != ""
	}) {
		t.Fatal("no poll")
	}

	s.bob.React(roomB, id.EventID(ap.ID), "✅")
	s.bob.React(roomB, id.EventID(qp.ID), "1️⃣")
	s.bob.VotePoll(roomB, poll, "o2")
	for _, ev := range actions(s.barrier(s.bob, roomB)) {
		t.Errorf("a click from another room was delivered: %+v", ev)
	}

	// The same clicks in the prompts' room count.
	s.alice.React(roomA, id.EventID(ap.ID), "✅")
	s.alice.React(roomA, id.EventID(qp.ID), "1️⃣")
	s.alice.VotePoll(roomA, poll, "o2")
	got := actions(s.barrier(s.alice, roomA))
	want := []string{"p-approve allow []", "p-question answer [1]", "p-question answer [2]"}
	if len(got) != len(want) {
		t.Fatalf("clicks in the prompts' room: %+v", got)
	}
	for i, ev := range got {
		if got := fmt.Sprintf("%s %s %v", ev.Click.PromptID, ev.Click.Choice, ev.Click.Answers); got != want[i] || ev.Thread != th {
			t.Errorf("click %d: %q in %v, want %q in %v", i, got, ev.Thread, want[i], th)
		}
	}
}
