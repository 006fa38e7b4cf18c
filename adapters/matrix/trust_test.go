package matrix_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/store"
)

// Who may do what (docs/USER_GUIDE.md: "Who may do what") on Matrix's own surface:
// commands typed in someone else's thread, and the ♾️ reaction ("Always
// allow"). alice starts the threads, bob is another allowed user, carol
// an admin. The oracles are outside the bot: what the homeserver shows,
// the store's rows, the disk.

func threadKey(room id.RoomID, root id.EventID) string {
	return matrix.Platform + "/" + room.String() + "/" + root.String()
}

// audited reports whether the audit log holds an entry of the thread by
// user with action, whose target or detail contains what.
func (h *harness) audited(room id.RoomID, root id.EventID, user id.UserID, action, what string, allowed bool) bool {
	h.t.Helper()
	log, err := h.st.AuditLog(context.Background(), threadKey(room, root), 0)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, e := range log {
		if e.UserID == user.String() && e.Action == action && e.Allowed == allowed && strings.Contains(e.Target+" "+e.Detail, what) {
			return true
		}
	}
	return false
}

// channelRules are the store's rules wider than a thread.
func (h *harness) channelRules() []store.Rule {
	h.t.Helper()
	rules, err := h.st.Rules(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	var out []store.Rule
	for _, r := range rules {
		if r.Scope != "thread" {
			out = append(out, r)
		}
	}
	return out
}

// TestTrustOthersCannotStopOrSwitchMode: in alice's running thread bob's
// `stop` and `mode acceptEdits` are refused with a note and audited; the
// turn runs to its end and the thread keeps its mode.
func TestTrustOthersCannotStopOrSwitchMode(t *testing.T) {
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h := newHarness(t, options{script: script(hold)})
	room := h.room(false)
	root := h.mention(h.alice, room, "slow please")
	h.waitBot(room, root, `slow answe`)

	for _, word := range []string{"stop", "mode"} {
		text := word
		if word == "mode" {
			text = "mode acceptEdits"
		}
		h.bob.SendText(room, text, "", root)
		h.waitBot(room, root, `Only @alice:\S+ \(who started this thread\) or an admin can use `+"`"+word+"`"+` in this thread`)
		if !h.audited(room, root, h.bob.User.ID, "refused", "`"+word+"`", false) {
			t.Errorf("bob's %q is not in the audit log as refused", text)
		}
	}
	// Not interrupted: released, the turn ends normally.
	release()
	h.waitBot(room, root, `✓ .* turn|■ Stopped`)
	if n := len(h.botMessages(room, root, `■ Stopped|^Stopping`)); n != 0 {
		t.Fatalf("bob's stop stopped alice's turn:\n%s", h.dump(room, root))
	}
	h.waitBot(room, root, `slow answer that takes a while (more ){20}`)
	th, ok, err := h.st.GetThread(context.Background(), threadKey(room, root))
	if err != nil || !ok || th.Mode != "" {
		t.Errorf("thread after bob's mode: %+v (found %v, %v)", th, ok, err)
	}
	h.alice.SendText(room, "status", "", root)
	if st := h.waitBot(room, root, `Mode: \w+`); !strings.Contains(st.Body, "Mode: default") {
		t.Errorf("status after bob's mode: %q", st.Body)
	}
}

// TestTrustAlwaysAllowReactionIsForAdmins: alice is no admin, so her
// prompt has no ♾️, and her ♾️ on it makes no channel rule (a new thread
// asks again). carol's prompt has ♾️, and her ♾️ saves the channel rule:
// another thread of the room runs the same command unasked.
func TestTrustAlwaysAllowReactionIsForAdmins(t *testing.T) {
	// A glob, because the homeserver's name is known only once it runs.
	h := newHarness(t, options{mod: func(bc *bot.Config, _ *matrix.Config) { bc.Admins = []string{"@carol:*"} }})
	carol := h.srv.Client(t, h.srv.Register(t, "carol"), dendrite.ClientOptions{})
	room := h.room(false)
	h.alice.Invite(room, carol.User.ID)
	carol.Join(room)

	a := h.mention(h.alice, room, "run mkdir by-alice")
	p := h.waitPrompt(room, a, "")
	if keys := strings.Join(h.ownReactions(room, p), " "); keys != "✅ 🧵 ❌" {
		t.Fatalf("a non-admin's prompt: reactions %q, want ✅ 🧵 ❌", keys)
	}
	h.alice.React(room, p, "♾️")
	h.alice.React(room, p, "✅") // what decides, once
	h.waitBot(room, a, `Allowed by @alice`)
	if rs := h.channelRules(); len(rs) != 0 {
		t.Fatalf("alice's ♾️ made channel rules: %+v", rs)
	}
	h.waitBot(room, a, `✓ .* turn`)
	if n := len(h.botMessages(room, a, `always in this channel`)); n != 0 {
		t.Errorf("alice's ♾️ counted:\n%s", h.dump(room, a))
	}
	b := h.mention(h.alice, room, "run mkdir by-alice-2")
	p2 := h.waitPrompt(room, b, "")
	h.alice.React(room, p2, "❌")
	h.waitBot(room, b, `Denied by @alice`)
	if _, err := os.Stat(filepath.Join(h.dir, "by-alice-2")); !os.IsNotExist(err) {
		t.Errorf("the command ran in a second thread without a decision: %v", err)
	}

	c := h.mention(carol, room, "run touch by-carol.txt")
	pc := h.waitPrompt(room, c, "")
	if keys := strings.Join(h.ownReactions(room, pc), " "); keys != "✅ 🧵 ♾️ ❌" {
		t.Fatalf("an admin's prompt: reactions %q, want ✅ 🧵 ♾️ ❌", keys)
	}
	carol.React(room, pc, "♾️")
	// The body is Markdown: the rule's parentheses come escaped.
	h.waitBot(room, c, `Allowed by @carol:\S+ always in this channel \\\(Bash\\\(touch by-carol\.txt\\\)\\\)`)
	rs := h.channelRules()
	if len(rs) != 1 || rs[0].Scope != "channel" || rs[0].ScopeKey != matrix.Platform+"/"+room.String() || rs[0].Effect != "allow" ||
		rs[0].Tool != "Bash" || rs[0].Pattern != "touch by-carol.txt" || rs[0].CreatedBy != carol.User.ID.String() {
		t.Fatalf("channel rules %+v, want carol's allow Bash(touch by-carol.txt) for the room", rs)
	}
	h.waitBot(room, c, `✓ .* turn`)

	// touch writes the file it names: the rule is that very command, which
	// now runs unasked in another thread.
	if err := os.Remove(filepath.Join(h.dir, "by-carol.txt")); err != nil {
		t.Fatal(err)
	}
	d := h.mention(h.alice, room, "run touch by-carol.txt")
	h.waitBot(room, d, `tool result: `)
	h.waitBot(room, d, `✓ .* turn`)
	if n := len(h.botMessages(room, d, `React ✅|Allowed by|Denied by`)); n != 0 {
		t.Errorf("the channel rule did not apply in another thread:\n%s", h.dump(room, d))
	}
	if _, err := os.Stat(filepath.Join(h.dir, "by-carol.txt")); err != nil {
		t.Errorf("the command the channel rule allows did not run: %v", err)
	}
}
