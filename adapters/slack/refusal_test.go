package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// TestRefusalToldOnce: one mention by someone not allowed reaches the bot
// as two Slack events (message and app_mention); they are told once, and
// the refusal is audited once.
func TestRefusalToldOnce(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)
	h.fs.AddUser(fakeslack.User{ID: mallory, Name: "mallory"})
	h.fs.Post(mallory, general, mention+"let me in")
	h.ephemeral(mallory, `not allowed to use this bot`)
	// Both events of the mention have been handled once a later message
	// is answered: Slack sends a channel's events in order.
	ts := h.fs.Post(alice, general, mention+"hello after mallory")
	h.waitThread(ts, `✓ .* turns?$`)

	told := 0
	for _, m := range h.fs.Ephemerals(general, mallory) {
		if strings.Contains(m.VisibleText(), "not allowed to use this bot") {
			told++
		}
	}
	log, err := h.st.AuditLog(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	audited := 0
	for _, a := range log {
		if a.UserID == mallory && a.Action == "refused" {
			audited++
		}
	}
	if told != 1 || audited != 1 {
		t.Errorf("mallory was told %d times and the refusal audited %d times; want once each", told, audited)
	}
}

// TestSlashRefusalIsPrivate: `/claude` from someone who may not use the bot
// puts nothing in the channel — no "who asked" root, no thread, not even
// for a moment (the fake's record of everything posted there, deleted
// messages included, is the oracle) — and the refusal reaches only them,
// ephemeral, audited once. An allowed person's `/claude status` and
// `/claude <prompt>` still open a thread and are answered in it.
func TestSlashRefusalIsPrivate(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)
	h.fs.AddUser(fakeslack.User{ID: mallory, Name: "mallory"})

	for _, text := range []string{"status", "run rm -rf ~", ""} {
		if err := h.fs.Slash(mallory, general, "/claude", text); err != nil {
			t.Fatal(err)
		}
	}
	if !h.fs.WaitFor(wait, func() bool { return refusedCount(t, h, mallory) == 3 }) {
		t.Fatalf("mallory's three commands were audited %d times, want 3", refusedCount(t, h, mallory))
	}
	h.ephemeral(mallory, `not allowed to use this bot`)
	// What alice runs next is answered: mallory's commands, run before, had
	// their chance to post.
	if err := h.fs.Slash(alice, general, "/claude", "status"); err != nil {
		t.Fatal(err)
	}
	status := slashThread(t, h, alice, "status")
	h.waitThread(status, `State: no session yet`)
	if err := h.fs.Slash(alice, general, "/claude", "say hello"); err != nil {
		t.Fatal(err)
	}
	prompt := slashThread(t, h, alice, "say hello")
	h.waitThread(prompt, `ok: say hello`)

	for _, m := range h.fs.Posted(general) {
		if m.TS == status || m.ThreadTS == status || m.TS == prompt || m.ThreadTS == prompt {
			continue // alice's
		}
		t.Errorf("posted in the channel for everyone (deleted: %v): %q", m.Deleted, m.VisibleText())
	}
	told := 0
	for _, m := range h.fs.Ephemerals(general, mallory) {
		if strings.Contains(m.VisibleText(), "not allowed to use this bot") {
			told++
		}
	}
	if told != 3 {
		t.Errorf("mallory was told %d times, want once per command (3)", told)
	}
	for _, c := range h.api.Requests() {
		if strings.Contains(c.LastUserText(), "rm -rf") {
			t.Error("a refused command reached Claude")
		}
	}
	h.noViolations()
}

// refusedCount is how many refusals of user the audit log holds.
func refusedCount(t *testing.T, h *harness, user string) int {
	t.Helper()
	log, err := h.st.AuditLog(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range log {
		if a.UserID == user && a.Action == "refused" {
			n++
		}
	}
	return n
}

// slashThread waits for the root the bot posts for user's `/claude text`
// and returns its ts.
func slashThread(t *testing.T, h *harness, user, text string) string {
	t.Helper()
	var ts string
	if !h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Messages(general) {
			if m.BotID != "" && strings.HasSuffix(m.VisibleText(), "<@"+user+"> asked: "+text) {
				ts = m.TS
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no thread opened for %s's /claude %s", user, text)
	}
	return ts
}

// TestNoThreadNoPost: what the bot would say in a thread that is not open
// (a refused slash command's, should telling them privately fail) is not
// posted at all, rather than for the whole channel to see.
func TestNoThreadNoPost(t *testing.T) {
	s := newSolo(t)
	channelOnly := adapters.ThreadRef{Platform: slack.Platform, Channel: general}
	for _, m := range []adapters.Message{
		{Kind: adapters.KindNotice, Text: "You are not allowed to use this bot."},
		{Kind: adapters.KindText, Text: "an answer", Final: true},
	} {
		if _, err := s.ad.Direct().Post(t.Context(), channelOnly, m); err == nil {
			t.Errorf("%q was posted with no thread", m.Text)
		}
	}
	for _, m := range s.fs.Posted(general) {
		t.Errorf("posted in the channel: %q", m.VisibleText())
	}
}
