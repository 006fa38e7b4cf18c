//go:build goolm

package dendrite

import (
	"bytes"
	"context"
	"testing"

	"maunium.net/go/mautrix/event"
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
