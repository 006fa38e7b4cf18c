package slack_test

import (
	"context"
	"strings"
	"testing"

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
