package slack_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/store"
)

// Who may do what (docs/USER_GUIDE.md: "Who may do what") on Slack's own surface: the
// Stop button, commands typed in someone else's thread, and the "Always
// allow" button. alice starts the threads, bob is another allowed user,
// carol an admin. The oracles are outside the bot: what fakeslack shows
// each person, what the model API received, the store's rows, the disk.

const (
	carol       = "U0CAROL001" // an admin, where a test makes her one
	allowAlways = "claudeops_approval_allow_always"
)

// withAdmin makes carol an admin (admins are allowed users too).
func withAdmin(bc *bot.Config, _ *slack.Config) { bc.Admins = []string{carol} }

// addCarol puts carol in the workspace and in #general.
func (h *harness) addCarol() {
	h.fs.AddUser(fakeslack.User{ID: carol, Name: "carol", RealName: "Carol Example", Email: "carol@example.com"})
	h.fs.AddChannel(fakeslack.Channel{ID: general, Name: "general", Members: []string{alice, bob, carol}})
}

func threadKey(ts string) string { return slack.Platform + "/" + general + "/" + ts }

// stopButton is the bot's message of the thread that has a Stop button.
func (h *harness) stopButton(threadTS string) (fakeslack.Message, bool) {
	for _, m := range h.fs.Thread(general, threadTS) {
		if m.BotID != "" && slices.Contains(m.ActionIDs(), "claudeops_stop") {
			return m, true
		}
	}
	return fakeslack.Message{}, false
}

func (h *harness) waitStopButton(threadTS string) fakeslack.Message {
	h.t.Helper()
	var m fakeslack.Message
	if !h.fs.WaitFor(wait, func() bool {
		var ok bool
		m, ok = h.stopButton(threadTS)
		return ok
	}) {
		h.t.Fatalf("no Stop button in the thread:\n%s", h.dump(threadTS))
	}
	return m
}

// botSaid reports whether a bot message of the thread matches pattern.
func (h *harness) botSaid(threadTS, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, m := range h.fs.Thread(general, threadTS) {
		if m.BotID != "" && re.MatchString(m.VisibleText()) {
			return true
		}
	}
	return false
}

// audited reports whether the audit log holds an entry of the thread by
// user with action, whose target or detail contains what.
func (h *harness) audited(threadTS, user, action, what string, allowed bool) bool {
	h.t.Helper()
	log, err := h.st.AuditLog(context.Background(), threadKey(threadTS), 0)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, e := range log {
		if e.UserID == user && e.Action == action && e.Allowed == allowed && strings.Contains(e.Target+" "+e.Detail, what) {
			return true
		}
	}
	return false
}

// requestWith is the first model request whose last user text contains s.
func (h *harness) requestWith(s string) *fakeanthropic.Request {
	h.t.Helper()
	for _, r := range h.api.Requests() {
		if strings.Contains(r.LastUserText(), s) {
			return r
		}
	}
	h.t.Fatalf("no model request with %q", s)
	return nil
}

// twoHolds is the chat script whose "slow" answers wait for first, and
// whose "slow again" answers wait for second.
func twoHolds(first, second <-chan struct{}) fakeanthropic.Script {
	a, b := script(first), script(second)
	return func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.Contains(req.LastUserText(), "slow again") {
			return b(ctx, req)
		}
		return a(ctx, req)
	}
}

func releaser(t *testing.T) (chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return ch, release
}

// TestTrustStopButtonIsTheStarters: bob's click on the Stop button of
// alice's running turn is refused with a note only he sees and audited;
// the turn runs to its end. alice's own click stops her next turn.
func TestTrustStopButtonIsTheStarters(t *testing.T) {
	first, releaseFirst := releaser(t)
	second, _ := releaser(t)
	h := newHarness(t, twoHolds(first, second), fakeslack.Options{}, nil)
	ts := h.fs.Post(alice, general, mention+"slow please")
	h.waitThread(ts, `slow answe`)
	stop := h.waitStopButton(ts)

	if err := h.fs.Click(bob, general, stop.TS, "claudeops_stop"); err != nil {
		t.Fatal(err)
	}
	h.ephemeral(bob, `Only `+alice+` \(who started this thread\) or an admin can stop this thread`)
	if !h.audited(ts, bob, "refused", "stop this thread", false) {
		t.Error("bob's Stop click is not in the audit log as refused")
	}
	// The turn was not interrupted: released, it ends normally.
	releaseFirst()
	h.waitThread(ts, `(✓ .* turns?|■ Stopped.*)$`)
	if h.botSaid(ts, `■ Stopped|Stopping`) {
		t.Fatalf("bob's click stopped alice's turn:\n%s", h.dump(ts))
	}
	h.waitThread(ts, `✓ .* turns?$`)
	h.waitThread(ts, `slow answer that takes a while (more ){20}`)
	if h.audited(ts, bob, "stop", "turn", true) {
		t.Error("the audit log has bob stopping the turn")
	}
	if !h.fs.WaitFor(wait, func() bool { _, ok := h.stopButton(ts); return !ok }) {
		t.Fatalf("Stop button left after the turn:\n%s", h.dump(ts))
	}

	// The starter's click does stop.
	h.fs.Reply(alice, general, ts, "slow again")
	stop = h.waitStopButton(ts)
	if err := h.fs.Click(alice, general, stop.TS, "claudeops_stop"); err != nil {
		t.Fatal(err)
	}
	h.waitThread(ts, `■ Stopped`)
	if !h.audited(ts, alice, "stop", "turn", true) {
		t.Error("alice's stop is not in the audit log")
	}
	h.noViolations()
}

// TestTrustOthersCannotChangeTheThread: in alice's thread bob may talk,
// but `mode`, `model` and `new` are refused with a note, audited, and
// change nothing: the store's thread row and the next model request
// (same model, same conversation) show it.
func TestTrustOthersCannotChangeTheThread(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)
	ts := h.fs.Post(alice, general, mention+"remember the word heron")
	h.waitThread(ts, `ok: remember the word heron`)
	h.waitThread(ts, `✓ .* turns?$`)
	before := h.threadRow(ts)
	if before.SessionID == "" {
		t.Fatalf("no session recorded: %+v", before)
	}
	const otherModel = "claude-haiku-4-5"
	for _, c := range []struct{ text, word string }{
		{"mode acceptEdits", "mode"},
		{"model " + otherModel, "model"},
		{"new", "new"},
	} {
		h.fs.Reply(bob, general, ts, c.text)
		h.ephemeral(bob, `Only `+alice+` \(who started this thread\) or an admin can use `+"`"+c.word+"`"+` in this thread`)
		if !h.audited(ts, bob, "refused", "`"+c.word+"`", false) {
			t.Errorf("bob's %q is not in the audit log as refused", c.text)
		}
	}
	// Talking is for everyone allowed.
	h.fs.Reply(bob, general, ts, "bob asks too")
	h.waitThread(ts, `ok: .*bob asks too`)

	h.fs.Reply(alice, general, ts, "what was the word")
	h.waitThread(ts, `ok: .*what was the word`)
	after := h.threadRow(ts)
	if after.SessionID != before.SessionID || after.Mode != before.Mode || after.Model != before.Model {
		t.Errorf("bob changed alice's thread: before %+v, after %+v", before, after)
	}
	first, last := h.requestWith("remember the word heron"), h.requestWith("what was the word")
	if last.Model != first.Model || last.Model == otherModel {
		t.Errorf("model %q after bob's `model`, %q before", last.Model, first.Model)
	}
	if !strings.Contains(last.Transcript(), "remember the word heron") {
		t.Errorf("the conversation did not go on after bob's `new`:\n%s", last.Transcript())
	}
	for _, r := range h.api.Requests() {
		if tr := r.Transcript(); strings.Contains(tr, "mode acceptEdits") || strings.Contains(tr, "model "+otherModel) {
			t.Errorf("a refused command reached Claude:\n%s", tr)
		}
	}
	h.noViolations()
}

func (h *harness) threadRow(ts string) store.Thread {
	h.t.Helper()
	th, ok, err := h.st.GetThread(context.Background(), threadKey(ts))
	if err != nil || !ok {
		h.t.Fatalf("thread %s: ok %v, %v", ts, ok, err)
	}
	return th
}

// button is the value and block id of a message's element actionID.
func button(t *testing.T, m fakeslack.Message, actionID string) (value, blockID string) {
	t.Helper()
	var blocks []struct {
		BlockID  string `json:"block_id"`
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		for _, el := range b.Elements {
			if el.ActionID == actionID {
				return el.Value, b.BlockID
			}
		}
	}
	t.Fatalf("message %s has no %s (actions %v)", m.TS, actionID, m.ActionIDs())
	return "", ""
}

// channelRules are the store's channel-scope rules.
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

// TestTrustAlwaysAllowButtonIsForAdmins: a non-admin's prompt has no
// "Always allow" button, and a forged allow_always click from its starter
// becomes a thread grant: no channel rule, a new thread asks again. An
// admin's prompt has the button, and the admin's click saves the channel
// rule: another thread of the channel runs the same command unasked.
func TestTrustAlwaysAllowButtonIsForAdmins(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, withAdmin)
	h.addCarol()

	a := h.fs.Post(alice, general, mention+"run mkdir by-alice")
	p := h.waitPrompt(a, "")
	if slices.Contains(p.ActionIDs(), allowAlways) {
		t.Fatalf("a non-admin's prompt offers Always allow: %v", p.ActionIDs())
	}
	value, block := button(t, p, "claudeops_approval_allow")
	forged := map[string]any{"action_id": allowAlways, "value": value, "block_id": block}
	if err := h.fs.ForgeAction(alice, general, p.TS, forged); err != nil {
		t.Fatal(err)
	}
	h.waitThread(a, `Allowed by `+alice)
	if rs := h.channelRules(); len(rs) != 0 {
		t.Fatalf("alice's forged Always allow made channel rules: %+v", rs)
	}
	h.waitThread(a, `Allowed by `+alice+` for this thread \(Bash\(mkdir by-alice\)\) \(Always allow is for admins: for this thread instead\)`)
	h.waitThread(a, `✓ .* turns?$`)
	if !h.audited(a, alice, "refused", "allow_always by a non-admin", false) {
		t.Error("the downgraded Always allow is not in the audit log")
	}
	b := h.fs.Post(alice, general, mention+"run mkdir by-alice-2")
	p2 := h.waitPrompt(b, "")
	if err := h.fs.Click(alice, general, p2.TS, "claudeops_approval_deny"); err != nil {
		t.Fatal(err)
	}
	h.waitThread(b, `Denied by `+alice)
	h.waitThread(b, `✓ .* turns?$`)
	if _, err := os.Stat(filepath.Join(h.dir, "by-alice-2")); !os.IsNotExist(err) {
		t.Errorf("the command ran in a second thread without a decision: %v", err)
	}

	c := h.fs.Post(carol, general, mention+"run touch by-carol.txt")
	pc := h.waitPrompt(c, "")
	want := "claudeops_approval_allow claudeops_approval_allow_thread " + allowAlways + " claudeops_approval_deny"
	if got := strings.Join(pc.ActionIDs(), " "); got != want {
		t.Fatalf("an admin's prompt: buttons %s, want %s", got, want)
	}
	if err := h.fs.Click(carol, general, pc.TS, allowAlways); err != nil {
		t.Fatal(err)
	}
	h.waitThread(c, `Allowed by `+carol+` always in this channel \(Bash\(touch by-carol\.txt\)\)`)
	h.waitThread(c, `✓ .* turns?$`)
	rs := h.channelRules()
	if len(rs) != 1 || rs[0].Scope != "channel" || rs[0].ScopeKey != slack.Platform+"/"+general || rs[0].Effect != "allow" ||
		rs[0].Tool != "Bash" || rs[0].Pattern != "touch by-carol.txt" || rs[0].CreatedBy != carol {
		t.Fatalf("channel rules %+v, want carol's allow Bash(touch by-carol.txt) for %s", rs, general)
	}

	// touch writes the file it names: the rule is that very command, which
	// now runs unasked in another thread.
	if err := os.Remove(filepath.Join(h.dir, "by-carol.txt")); err != nil {
		t.Fatal(err)
	}
	d := h.fs.Post(alice, general, mention+"run touch by-carol.txt")
	h.waitThread(d, `tool result: `)
	h.waitThread(d, `✓ .* turns?$`)
	if h.botSaid(d, `Allowed by|Denied by|wants to run`) {
		t.Errorf("the channel rule did not apply in another thread:\n%s", h.dump(d))
	}
	for _, m := range h.fs.Thread(general, d) {
		if strings.Contains(strings.Join(m.ActionIDs(), ","), "claudeops_approval") {
			t.Errorf("a prompt in a thread the channel rule covers: %q", m.VisibleText())
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "by-carol.txt")); err != nil {
		t.Errorf("the command the channel rule allows did not run: %v", err)
	}
	h.noViolations()
}
