//go:build goolm

package matrix_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	_ "github.com/mattn/go-sqlite3" // the crypto store, as an operator opens it

	"github.com/claudeops/claudeops/internal/dendrite"
)

// TestEncryptedRoomDecisionsNeedTrust: in an end-to-end encrypted room a
// decision counts only when it comes encrypted from a session its sender
// has verified (signed with their cross-signing identity). A reaction, a
// typed decision, a poll vote or a command sent in clear, and the same
// sent encrypted from alice's account on a session she never verified,
// decide nothing: the prompt stays open, the model gets no tool result,
// the mode is kept, each is audited, and alice is told why once per
// reason, not once per event. From her verified session the same
// reaction, vote and reply decide; talk from the unverified one still
// reaches Claude.
func TestEncryptedRoomDecisionsNeedTrust(t *testing.T) {
	h := newHarness(t, options{crypto: true})
	room := h.room(true)
	// alice's account on a session of its own that nobody verified: a
	// stolen password or token looks like this.
	stranger := h.srv.Client(t, h.srv.Login(t, h.alice.User), dendrite.ClientOptions{Crypto: true, Unverified: true})
	if !stranger.WaitFor(wait, func() bool {
		return stranger.Encrypted(room) && stranger.Membership(room, h.botUser.ID) == event.MembershipJoin
	}) {
		t.Fatal("the unverified session never saw the room")
	}
	root := h.mention(h.alice, room, "run touch decided.txt")
	prompt := h.waitPrompt(room, root, "")

	inThread := func(body string) *event.MessageEventContent {
		c := &event.MessageEventContent{MsgType: event.MsgText, Body: body, Mentions: &event.Mentions{}}
		c.RelatesTo = (&event.RelatesTo{}).SetThread(root, root)
		return c
	}
	hostile := []struct {
		name string
		send func() id.EventID
	}{
		{"a reaction in clear", func() id.EventID { return h.alice.ReactInClear(room, prompt, "✅") }},
		{"a typed allow in clear", func() id.EventID { return h.alice.SendClear(room, event.EventMessage, inThread("allow")) }},
		{"mode in clear", func() id.EventID { return h.alice.SendClear(room, event.EventMessage, inThread("mode acceptEdits")) }},
		{"stop in clear", func() id.EventID { return h.alice.SendClear(room, event.EventMessage, inThread("stop")) }},
		{"a reaction from an unverified session", func() id.EventID { return stranger.React(room, prompt, "✅") }},
		{"a typed allow from an unverified session", func() id.EventID { return stranger.SendText(room, "allow", "", root) }},
	}
	for _, c := range hostile {
		c.send()
	}
	decided := func() bool { return len(h.botMessages(room, root, `Allowed by|Denied by|Cancelled|Answered by`)) > 0 }
	h.waitRefusals(room, root, len(hostile), decided)
	if decided() {
		t.Fatalf("a decision that did not come encrypted from alice's verified session counted:\n%s", h.dump(room, root))
	}
	for _, r := range h.api.Requests() {
		if len(r.ToolResults()) > 0 {
			t.Errorf("the model received a tool result: %+v", r.ToolResults())
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "decided.txt")); !os.IsNotExist(err) {
		t.Errorf("the command ran: %v", err)
	}
	if th, _, err := h.st.GetThread(context.Background(), threadKey(room, root)); err != nil || th.Mode == "acceptEdits" {
		t.Errorf("thread mode %q (%v): a mode sent in clear counted", th.Mode, err)
	}
	h.toldOncePerReason(room, root)

	// alice's verified session decides, encrypted.
	h.alice.React(room, prompt, "✅")
	h.waitBot(room, root, `Allowed by @alice`)
	h.waitBot(room, root, `tool result: `)
	if _, err := os.Stat(filepath.Join(h.dir, "decided.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}

	// A question: votes in clear or from the unverified session do not
	// answer it; a vote from the verified one does.
	h.alice.SendText(room, "ask one", "", root)
	var poll dendrite.Message
	if !h.alice.WaitFor(wait, func() bool {
		if ps := h.polls(room, root); len(ps) == 1 {
			poll = ps[0]
		}
		return poll.ID != ""
	}) {
		t.Fatalf("no poll:\n%s", h.dump(room, root))
	}
	h.alice.VotePollInClear(room, poll.ID, "o1")
	stranger.VotePoll(room, poll.ID, "o1")
	answered := func() bool { return len(h.botMessages(room, root, `Answered by`)) > 0 }
	h.waitRefusals(room, root, len(hostile)+2, answered)
	if answered() {
		t.Fatalf("a vote that did not come encrypted from alice's verified session answered:\n%s", h.dump(room, root))
	}
	h.toldOncePerReason(room, root)
	h.alice.VotePoll(room, poll.ID, "o2")
	h.waitBot(room, root, `Answered by @alice:\S+: Blue`)

	// And a typed decision from it.
	h.alice.SendText(room, "run touch denied.txt", "", root)
	h.waitPrompt(room, root, prompt)
	h.alice.SendText(room, "deny not today", "", root)
	h.waitBot(room, root, `Denied by @alice:\S+: not today`)

	// Talk from the unverified session still reaches Claude, as anyone's.
	stranger.SendText(room, "hello from elsewhere", "", root)
	h.waitBot(room, root, `ok: .*hello from elsewhere`)
}

// waitRefusals waits until the thread's audit log holds n refusals of
// alice's, or until stop holds.
func (h *harness) waitRefusals(room id.RoomID, root id.EventID, n int, stop func() bool) {
	h.t.Helper()
	count := func() int {
		log, err := h.st.AuditLog(context.Background(), threadKey(room, root), 0)
		if err != nil {
			h.t.Fatal(err)
		}
		k := 0
		for _, e := range log {
			if e.UserID == h.alice.User.ID.String() && e.Action == "refused" && !e.Allowed {
				k++
			}
		}
		return k
	}
	if !h.alice.WaitFor(wait, func() bool { return count() >= n || stop() }) {
		h.t.Fatalf("%d refusals audited, want %d:\n%s", count(), n, h.dump(room, root))
	}
	if !stop() && count() != n {
		h.t.Errorf("%d refusals audited, want %d", count(), n)
	}
}

// toldOncePerReason: alice was told once that what she sent in clear did
// not count, and once that what came from her unverified session did not.
// (Each is told after its refusal is audited: wait for it.)
func (h *harness) toldOncePerReason(room id.RoomID, root id.EventID) {
	h.t.Helper()
	for _, re := range []string{`did not count.*unencrypted`, `did not count.*not verified`} {
		h.waitBot(room, root, re)
		if n := len(h.botMessages(room, root, re)); n != 1 {
			h.t.Errorf("told %d times matching %q, want once:\n%s", n, re, h.dump(room, root))
		}
	}
}

// TestResetIdentityNeedsTheOperator: someone with alice's password logs in
// a session of their own, gives her account a new cross-signing identity
// and signs the session with it. Its decisions do not count, before the
// bot has fetched the new identity (the session is unsigned to it) and
// after (the identity is not the first it saw). Once the operator accepts
// the new identity as docs/SECURITY.md says (the bot stopped), they do.
func TestResetIdentityNeedsTheOperator(t *testing.T) {
	h := newHarness(t, options{crypto: true})
	room := h.room(true)
	root := h.mention(h.alice, room, "run touch reset.txt")
	prompt := h.waitPrompt(room, root, "")
	taker := h.srv.Client(t, h.srv.Login(t, h.alice.User), dendrite.ClientOptions{Crypto: true, Unverified: true})
	if !taker.WaitFor(wait, func() bool {
		return taker.Encrypted(room) && taker.Membership(room, h.botUser.ID) == event.MembershipJoin
	}) {
		t.Fatal("the new session never saw the room")
	}
	taker.ResetCrossSigning()

	decided := func() bool { return len(h.botMessages(room, root, `Allowed by|Denied by|Cancelled`)) > 0 }
	changed := false
	for n := 1; n <= 20 && !changed; n++ {
		taker.SendText(room, "allow", "", root)
		h.waitRefusals(room, root, n, decided)
		if decided() {
			t.Fatalf("a decision from the session of a reset identity counted:\n%s", h.dump(room, root))
		}
		changed = h.audited(room, root, h.alice.User.ID, "refused", "identity that changed", false)
		if !changed {
			time.Sleep(250 * time.Millisecond) // the bot has not fetched the new identity yet
		}
	}
	if !changed {
		t.Fatal("the bot never saw the new identity")
	}

	// The operator accepts it, the bot stopped.
	h.stop()
	db, err := sql.Open("sqlite3", strings.TrimSuffix(h.dbPath, ".db")+".matrix-crypto.db")
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`UPDATE crypto_cross_signing_keys SET first_seen_key = key WHERE user_id = ? AND usage = 'master'`, h.alice.User.ID.String())
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("accepting the new identity: %v (%d rows)", err, n)
	}
	db.Close()
	h.start()

	// The prompt expired with the restart; a new one is decided from the
	// new identity's session.
	taker.SendText(room, "run touch reset.txt", "", root)
	next := h.waitPrompt(room, root, prompt)
	taker.React(room, next, "✅")
	h.waitBot(room, root, `Allowed by @alice`)
	h.waitBot(room, root, `tool result: `)
}
