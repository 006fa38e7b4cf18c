package slack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/bot/limits"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/settings"
)

// TestChannelBudget: #general's thread budget (set in chat, below what one
// turn costs) stops #general's thread at its first model request and
// refuses its next message before Claude; #infra, with none, is not
// limited by it, before or after. The oracles: the fake model API's
// requests, and what the fake Slack received.
func TestChannelBudget(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, func(bc *bot.Config, _ *slack.Config) {
		bc.Admins = []string{"U0ROOT0001"}
		l := bot.ConfigLayer(*bc)
		l.Put(settings.BudgetThread, settings.Value{Text: "0.0001", Source: settings.Source{
			Scope: settings.Scope{Level: settings.LevelChannel, Key: "slack/" + general}, Origin: settings.FromChat,
			By: "U0ROOT0001", At: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}})
		bc.Scopes = settings.New(l, bc.Admins)
		bc.Extensions = append(bc.Extensions, limits.New(limits.Config{}))
	})
	h.fs.AddChannel(fakeslack.Channel{ID: general, Name: "general", Members: []string{alice, bob}})
	h.fs.AddChannel(fakeslack.Channel{ID: infra, Name: "infra", Members: []string{alice, bob}})

	inB := h.fs.Post(alice, infra, mention+"hello infra")
	h.waitIn(infra, inB, `ok: .*hello infra`)

	inA := h.fs.Post(alice, general, mention+"hello general")
	h.waitIn(general, inA, `Stopped: this thread's budget is spent: \$0\.\d{6} of \$0\.0001 \(channel slack/`+general+`, set in chat by U0ROOT0001 on 2026-11-01 09:00 UTC\)`)
	if n := len(h.requestsWith("hello general")); n != 1 {
		t.Errorf("%d model requests for #general's turn, want the one that crossed its budget", n)
	}
	h.fs.Reply(alice, general, inA, mention+"more please")
	h.waitIn(general, inA, `Not sent to Claude: this thread's budget is spent`)
	if n := len(h.requestsWith("more please")); n != 0 {
		t.Errorf("%d model requests after #general's refusal, want none", n)
	}

	h.fs.Reply(alice, infra, inB, mention+"again infra")
	h.waitIn(infra, inB, `ok: .*again infra`)
	for _, m := range h.fs.Thread(infra, inB) {
		if strings.Contains(m.VisibleText(), "budget") {
			t.Errorf("#infra was told of a budget: %q", m.VisibleText())
		}
	}
}
