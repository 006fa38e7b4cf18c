//go:build goolm

package matrix_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
)

func TestEncryptedRoomRoundTrip(t *testing.T) {
	h := newHarness(t, options{crypto: true})
	room := h.room(true)
	root := h.mention(h.alice, room, "secret hello")
	reply := h.waitBot(room, root, `^ok: secret hello$`)
	// alice's client decrypted it: the bot's reply went out encrypted.
	for _, e := range h.alice.Events(room) {
		if e.ID == reply.ID && e.Mautrix.EventSource&event.SourceDecrypted == 0 {
			t.Errorf("the reply was not encrypted: %+v", e.Mautrix)
		}
	}
	// Approvals work there too, decided by alice's reaction as Element
	// sends it there: encrypted, from her verified session (the bot's own
	// reactions go in clear; edits are encrypted).
	h.alice.SendText(room, "run touch enc.txt", "", root)
	prompt := h.waitPrompt(room, root, "")
	h.alice.React(room, prompt, "✅")
	h.waitBot(room, root, `Allowed by @alice`)
	h.waitBot(room, root, `tool result: `)

	// A long tool output goes up as an encrypted file.
	h.alice.SendText(room, "run seq 1 3000", "", root)
	file := h.waitBot(room, root, `^bash-output\.txt$`)
	var ef event.EncryptedFileInfo
	raw, _ := json.Marshal(file.Raw["file"])
	if err := json.Unmarshal(raw, &ef); err != nil || ef.URL == "" || file.Raw["url"] != nil {
		t.Fatalf("not an encrypted attachment: %v (%v)", file.Raw, err)
	}
	uri, _ := ef.URL.Parse()
	data, err := h.alice.Matrix.DownloadBytes(t.Context(), uri)
	if err == nil {
		err = ef.DecryptInPlace(data)
	}
	if err != nil || !strings.Contains(string(data), "\n3000") {
		t.Errorf("encrypted tool output: %v, %.40q", err, data)
	}

	// Cross-signing was set up once, and its recovery key kept.
	acct, ok, err := h.st.ChatAccount(t.Context(), "matrix", h.botUser.ID.String())
	if err != nil || !ok || acct.RecoveryKey == "" {
		t.Errorf("recovery key not kept: %+v %v %v", acct, ok, err)
	}
	if b, err := os.ReadFile(strings.TrimSuffix(h.dbPath, ".db") + ".matrix-recovery-key"); err != nil || strings.TrimSpace(string(b)) != acct.RecoveryKey {
		t.Errorf("recovery key file: %q %v", b, err)
	}

	// After a restart the same device reads the room.
	h.restart()
	h.alice.SendText(room, "still there?", "", root)
	h.waitBot(room, root, `ok: .*still there\?`)
	if again, _, _ := h.st.ChatAccount(t.Context(), "matrix", h.botUser.ID.String()); again.RecoveryKey != acct.RecoveryKey || again.DeviceID != acct.DeviceID {
		t.Errorf("cross-signing or device changed on restart: %+v, was %+v", again, acct)
	}
}

func TestUndecryptableMessageIsReportedOnce(t *testing.T) {
	h := newHarness(t, options{crypto: true})
	room := h.room(true)
	h.alice.Invite(room, h.mallory.User.ID)
	h.mallory.Join(room)
	// Two messages encrypted with a session the bot never got the key of.
	bogus := map[string]any{
		"algorithm": "m.megolm.v1.aes-sha2", "sender_key": "c2VuZGVya2V5c2VuZGVya2V5c2VuZGVya2V5c2VuZA",
		"session_id": "bm9zdWNoc2Vzc2lvbm5vc3VjaHNlc3Npb25ub3N1Y2g", "device_id": "NOPE",
		"ciphertext": "QmFzZTY0Q2lwaGVydGV4dFRoYXREZWNyeXB0c1RvTm90aGluZw",
	}
	first := h.mallory.SendRaw(room, event.EventEncrypted, bogus)
	h.mallory.SendRaw(room, event.EventEncrypted, bogus)
	// mautrix waits ~25 s for the key to arrive before it gives up.
	h.waitBot(room, first, `could not decrypt a message from @mallory`)
	// Nothing announces that the second is not reported: it was sent with
	// the first and is given up at about the same time, so a report of it
	// would come within this pause.
	time.Sleep(2 * time.Second)
	var n int
	for _, e := range h.alice.Events(room) {
		if e.Sender == h.botUser.ID && strings.Contains(h.bodyOf(e), "could not decrypt") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d reports of undecryptable messages, want 1", n)
	}
}

func (h *harness) bodyOf(e *event.Event) string {
	b, _ := e.Content.Raw["body"].(string)
	return b
}
