//go:build goolm

package dendrite

import (
	"bytes"
	"context"
	"testing"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

func TestEncryptedRoundTrip(t *testing.T) {
	t.Parallel()
	alice, bob, room := pair(t, ClientOptions{Crypto: true}, RoomOptions{Name: "secret", Encrypted: true})
	if !bob.WaitFor(wait, func() bool { return bob.isEncrypted(room) }) {
		t.Fatal("bob never saw the room's encryption")
	}

	root := alice.SendText(room, "the password is hunter2", bob.User.ID, "")
	answer := bob.SendText(room, "got it", "", root)
	bob.Edit(room, answer, "got it, thanks")
	for _, c := range []*Client{alice, bob} {
		msgs := waitThread(t, c, room, root, func(m []Message) bool { return len(m) == 2 && m[1].Edits == 1 })
		if msgs[0].Type != event.EventMessage || msgs[0].Body != "bob: the password is hunter2" || msgs[1].Body != "got it, thanks" {
			t.Errorf("%s decrypted %+v", c.User.ID, msgs)
		}
	}

	// The server only ever had ciphertext.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	onServer, err := bob.Matrix.GetEvent(ctx, room, root)
	if err != nil || onServer.Type != event.EventEncrypted {
		t.Errorf("root on the server: %v %+v", err, onServer)
	}

	// An attachment is encrypted too, and decrypts to what was sent.
	data := []byte("top secret log\n")
	file := bob.SendFile(room, root, "secret.log", "text/plain", data)
	waitThread(t, alice, room, root, func(m []Message) bool { return len(m) == 3 && m[2].ID == file && m[2].MsgType == event.MsgFile })
	got := eventByID(alice, room, file).Content.AsMessage()
	if got.URL != "" || got.File == nil {
		t.Fatalf("encrypted file message: %+v", got)
	}
	cipher := download(t, alice, got.File.URL)
	if bytes.Equal(cipher, data) {
		t.Error("the media repository stored the file in clear")
	}
	if err := got.File.DecryptInPlace(cipher); err != nil || !bytes.Equal(cipher, data) {
		t.Errorf("decrypting the file: %v %q", err, cipher)
	}
}

// TestSessionTrust: what a receiving device learns of who sent an event,
// the facts a bot's trust policy stands on. A crypto client's device is
// signed by its user's cross-signing identity (a second session too, with
// the recovery key) unless made Unverified; mautrix then marks what it
// decrypts from them cross-signed (trust on first use of the identity) or
// unset. Encrypted reactions decrypt to m.reaction with their relation; a
// reaction sent in clear stays unencrypted.
func TestSessionTrust(t *testing.T) {
	t.Parallel()
	s := Start(t)
	aliceUser := s.Register(t, "alice")
	alice := s.Client(t, aliceUser, ClientOptions{Crypto: true})
	second := s.Client(t, s.Login(t, aliceUser), ClientOptions{Crypto: true})
	stranger := s.Client(t, s.Login(t, aliceUser), ClientOptions{Crypto: true, Unverified: true})
	bob := s.Client(t, s.Register(t, "bob"), ClientOptions{Crypto: true})
	room := alice.CreateRoom(RoomOptions{Name: "trust", Encrypted: true, Invite: []id.UserID{bob.User.ID}})
	bob.Join(room)
	for _, c := range []*Client{bob, second, stranger} {
		if !c.WaitFor(wait, func() bool { return c.isEncrypted(room) && c.Membership(room, bob.User.ID) == event.MembershipJoin }) {
			t.Fatalf("%s never saw the room encrypted with bob in it", c.User.DeviceID)
		}
	}
	root := alice.SendText(room, "a prompt", "", "")
	cases := []struct {
		name      string
		c         *Client
		clear     bool
		wantTrust id.TrustState
	}{
		{"the first session", alice, false, id.TrustStateCrossSignedTOFU},
		{"a second session, verified", second, false, id.TrustStateCrossSignedTOFU},
		{"a session never verified", stranger, false, id.TrustStateUnset},
		{"a reaction in clear", alice, true, id.TrustStateUnset},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var sent id.EventID
			if tc.clear {
				sent = tc.c.ReactInClear(room, root, "✅")
			} else {
				sent = tc.c.React(room, root, "✅")
			}
			var got *event.Event
			if !bob.WaitFor(wait, func() bool {
				got = eventByID(bob, room, sent)
				return got != nil && got.Type == event.EventReaction
			}) {
				t.Fatalf("bob never got the reaction as m.reaction: %+v", got)
			}
			if rel := got.Content.AsReaction().RelatesTo; rel.GetAnnotationID() != root || rel.GetAnnotationKey() != "✅" {
				t.Errorf("relation: %+v", rel)
			}
			if got.Mautrix.WasEncrypted == tc.clear || got.Mautrix.TrustState != tc.wantTrust || got.Mautrix.ForwardedKeys {
				t.Errorf("encrypted %v, trust %v, forwarded %v; want encrypted %v, trust %v",
					got.Mautrix.WasEncrypted, got.Mautrix.TrustState, got.Mautrix.ForwardedKeys, !tc.clear, tc.wantTrust)
			}
		})
	}
}
