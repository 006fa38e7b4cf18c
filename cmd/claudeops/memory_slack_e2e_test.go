package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testkit"
)

// End-to-end tests of a channel's memory on Slack: the built bot with the
// real CLI, the fake model API and the fake Slack. The oracles are what
// the model was sent (its requests' system blocks and messages) and what
// the fake Slack shows.

const rememberTool = "mcp__claudeops__remember"

// requestFor waits for the model request whose last user text ends with
// text, and returns it.
func requestFor(t *testing.T, api *fakeanthropic.Server, text string, log func() string) *fakeanthropic.Request {
	t.Helper()
	var got *fakeanthropic.Request
	testkit.WaitForf(t, 90*time.Second, func() bool {
		for _, r := range api.Requests() {
			if strings.HasSuffix(r.LastUserText(), text) {
				got = r
			}
		}
		return got != nil
	}, func() string { return "no model request for " + text + "; the bot's log:\n" + log() })
	return got
}

// saidIn waits until the thread shows a message containing s.
func saidIn(t *testing.T, r *slackToolsRun, channel, root, s string) fakeslack.Message {
	t.Helper()
	var got fakeslack.Message
	if !r.fs.WaitFor(90*time.Second, func() bool {
		for _, m := range r.fs.Thread(channel, root) {
			if strings.Contains(m.VisibleText(), s) {
				got = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the thread never said %q: %+v; the bot's log:\n%s", s, r.fs.Thread(channel, root), r.bot.stderr.String())
	}
	return got
}

// TestMemorySlackChannelsApart: a fact remembered in one channel is in the
// system prompt of a new session there, and in no request of a session of
// another channel, nor of a DM; a DM's own fact stays in the DM. No fact
// is ever in a request's messages.
func TestMemorySlackChannelsApart(t *testing.T) {
	r := startSlackTools(t, toolScript(nil))
	const general, other, alice = "C0GENERAL1", "C0OTHER001", "U0ALICE001"
	const factA, factDM = "the payments vault is vault-7", "alice's private reminder"
	root := r.fs.Post(alice, general, "<@U0FAKEBOT1> remember "+factA)
	saidIn(t, r, general, root, "Remembered for this channel")
	dmCh, dmRoot := r.fs.DM(alice, "remember "+factDM)
	saidIn(t, r, dmCh, dmRoot, "Remembered for this channel")

	inA := r.fs.Post(alice, general, "<@U0FAKEBOT1> hello from A")
	inB := r.fs.Post(alice, other, "<@U0FAKEBOT1> hello from B")
	_, inDM := r.fs.DM(alice, "hello from the DM")
	sysOf := func(text string) string {
		return strings.Join(requestFor(t, r.api, text, r.bot.stderr.String).System, "\n")
	}
	if sys := sysOf("hello from A"); !strings.Contains(sys, "1. "+factA) || strings.Contains(sys, factDM) {
		t.Errorf("channel A's session is given:\n%s", sys)
	}
	if sys := sysOf("hello from B"); strings.Contains(sys, factA) || strings.Contains(sys, factDM) || strings.Contains(sys, "channel-instructions") {
		t.Errorf("channel B's session is given:\n%s", sys)
	}
	if sys := sysOf("hello from the DM"); !strings.Contains(sys, "1. "+factDM) || strings.Contains(sys, factA) {
		t.Errorf("the DM's session is given:\n%s", sys)
	}
	saidIn(t, r, general, inA, "ok: hello from A")
	saidIn(t, r, other, inB, "ok: hello from B")
	saidIn(t, r, dmCh, inDM, "ok: hello from the DM")

	listB := r.fs.Post(alice, other, "<@U0FAKEBOT1> memory")
	saidIn(t, r, other, listB, "This channel has no facts yet")
	for _, req := range r.api.Requests() {
		if tr := req.Transcript(); strings.Contains(tr, factA) || strings.Contains(tr, factDM) {
			t.Errorf("a fact is in a request's messages:\n%s", tr)
		}
	}
	r.bot.stop(t)
	for _, v := range r.fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}

// TestMemorySlackProposal: Claude's remember tool posts the fact with a
// Remember button and stores nothing (the next session is not given it);
// a click by someone the bot does not let in is refused; alice's click
// stores it, and the next session is given it.
func TestMemorySlackProposal(t *testing.T) {
	r := startSlackTools(t, toolScript(map[string]fakeanthropic.Block{
		"propose it": fakeanthropic.ToolUse(rememberTool, map[string]string{"fact": "deploys go through the release branch <!channel>"}),
	}))
	const general, alice, mallory = "C0GENERAL1", "U0ALICE001", "U0MALLORY1"
	r.fs.AddUser(fakeslack.User{ID: mallory, Name: "mallory"})
	r.fs.Post(mallory, general, "hi all") // a member of the channel, not of the bot's users
	root := r.fs.Post(alice, general, "<@U0FAKEBOT1> propose it")
	res := toolResultFor(t, r.api, rememberTool, r.bot.stderr.String)
	if res.IsError || !strings.Contains(res.Content, "not stored") {
		t.Errorf("the tool answered %+v", res)
	}
	offer := saidIn(t, r, general, root, "Claude proposes a fact for this channel to remember")
	if !slices.Contains(offer.ActionIDs(), "claudeops_approval_allow") || !strings.Contains(offer.VisibleText(), "Remember") ||
		!strings.Contains(offer.VisibleText(), "deploys go through the release branch") {
		t.Fatalf("the proposal shows %q with %q", offer.VisibleText(), offer.ActionIDs())
	}
	if strings.Contains(offer.Text+string(offer.Blocks), "<!channel>") {
		t.Errorf("the proposal mentions the channel: %s", offer.Blocks)
	}
	saidIn(t, r, general, root, "the tool has answered")

	before := r.fs.Post(alice, general, "<@U0FAKEBOT1> before the click")
	if sys := strings.Join(requestFor(t, r.api, "before the click", r.bot.stderr.String).System, "\n"); strings.Contains(sys, "release branch") {
		t.Errorf("a proposal nobody accepted is given to sessions:\n%s", sys)
	}
	saidIn(t, r, general, before, "ok: before the click")

	if err := r.fs.Click(mallory, general, offer.TS, "claudeops_approval_allow"); err != nil {
		t.Fatal(err)
	}
	if !r.fs.WaitFor(90*time.Second, func() bool {
		return slices.ContainsFunc(r.fs.Ephemerals(general, mallory), func(m fakeslack.Message) bool {
			return strings.Contains(m.VisibleText(), "not allowed to use this bot")
		})
	}) {
		t.Errorf("mallory was not told: %+v; the bot's log:\n%s", r.fs.Ephemerals(general, mallory), r.bot.stderr.String())
	}
	if err := r.fs.Click(alice, general, offer.TS, "claudeops_approval_allow"); err != nil {
		t.Fatal(err)
	}
	saidIn(t, r, general, root, "Remembered by")
	after := r.fs.Post(alice, general, "<@U0FAKEBOT1> after the click")
	sys := strings.Join(requestFor(t, r.api, "after the click", r.bot.stderr.String).System, "\n")
	if !strings.Contains(sys, "1. deploys go through the release branch") {
		t.Errorf("the accepted fact is not given to a new session:\n%s", sys)
	}
	saidIn(t, r, general, after, "ok: after the click")
	list := r.fs.Post(alice, general, "<@U0FAKEBOT1> memory")
	if m := saidIn(t, r, general, list, "Facts of this channel"); !strings.Contains(m.VisibleText(), "1. deploys go through the release branch") || !strings.Contains(m.VisibleText(), "added by alice") || strings.Contains(m.VisibleText(), "2. ") {
		t.Errorf("memory lists %q", m.VisibleText())
	}
	r.bot.stop(t)
	for _, v := range r.fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}
