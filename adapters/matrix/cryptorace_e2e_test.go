//go:build goolm

package matrix_test

import (
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// TestEncryptWhileDecrypting: the bot sends in an encrypted room while its
// sync decrypts alice's messages there. Before each of its messages the
// bot's crypto state forgets its own devices and the room's session, as on
// its first message in a room, so that encrypting fetches its own keys
// again: that resets the crypto machine's cross-signing cache, which the
// decryption of alice's messages reads. Under -race this caught mautrix's
// unguarded cache (see lockedCrypto); every message must still go through.
func TestEncryptWhileDecrypting(t *testing.T) {
	const rounds = 20
	s := newSolo(t, soloOptions{crypto: true})
	ctx := t.Context()
	room := s.room(s.alice, true)
	th := s.thread(room)
	db, err := sql.Open("sqlite3", "file:"+s.cryptoDB+"?_busy_timeout=30000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	sent := make(chan error, 1)
	go func() {
		for i := range rounds {
			if _, err := db.ExecContext(ctx, "DELETE FROM crypto_tracked_user WHERE user_id=?", s.botUser.ID); err != nil {
				sent <- fmt.Errorf("forget the bot's devices: %w", err)
				return
			}
			if _, err := db.ExecContext(ctx, "DELETE FROM crypto_megolm_outbound_session WHERE room_id=?", room); err != nil {
				sent <- fmt.Errorf("forget the room's session: %w", err)
				return
			}
			if _, err := s.ad.Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("reply %d", i), Final: true}); err != nil {
				sent <- fmt.Errorf("reply %d: %w", i, err)
				return
			}
		}
		sent <- nil
	}()
	var ids []string
	for done := false; !done; {
		ids = append(ids, s.alice.SendText(room, fmt.Sprintf("message %d", len(ids)), "", id.EventID(th.Thread)).String())
		select {
		case err := <-sent:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
	}
	// Every message of alice's was decrypted and delivered.
	for _, want := range ids {
		s.until(func(ev adapters.Event) bool { return ev.ID() == want })
	}
	t.Logf("%d replies sent while alice sent %d messages", rounds, len(ids))
}
