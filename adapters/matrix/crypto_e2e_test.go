//go:build goolm

package matrix_test

import (
	"os"
	"strings"
	"testing"

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
	// Approvals work there too: reactions are not encrypted, edits are.
	h.alice.SendText(room, "run touch enc.txt", "", root)
	prompt := h.waitPrompt(room, root, "")
	h.alice.React(room, prompt, "✅")
	h.waitBot(room, root, `Allowed by @alice`)
	h.waitBot(room, root, `tool result: `)

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
}
