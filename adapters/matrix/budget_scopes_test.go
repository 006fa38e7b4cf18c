package matrix_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/bot/limits"
	"github.com/claudeops/claudeops/settings"
)

// TestRoomBudget: room A's thread budget (set in chat, below what one turn
// costs) stops A's thread at its first model request and refuses its
// next message before Claude; room B, with none, is not limited by it.
// The oracles: the fake model API's requests, and what Dendrite holds.
func TestRoomBudget(t *testing.T) {
	var r *settings.Resolver
	h := newHarness(t, options{mod: func(bc *bot.Config, _ *matrix.Config) {
		r = settings.New(bot.ConfigLayer(*bc), bc.Admins)
		bc.Scopes = r
		bc.Extensions = append(bc.Extensions, limits.New(limits.Config{}))
	}})
	a, b := h.room(false), h.room(false)
	r.SetChat(settings.Where{Platform: matrix.Platform, Channel: a.String()},
		settings.Scope{Level: settings.LevelChannel, Key: matrix.Platform + "/" + a.String()},
		settings.BudgetThread, "0.0001", "@root:example.org", time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	requests := func(marker string) int {
		n := 0
		for _, req := range h.api.Requests() {
			if strings.Contains(req.LastUserText(), marker) {
				n++
			}
		}
		return n
	}

	inB := h.mention(h.alice, b, "hello room b")
	h.waitBot(b, inB, `ok: hello room b`)
	inA := h.mention(h.alice, a, "hello room a")
	h.waitBot(a, inA, `Stopped: this thread's budget is spent: \$0\.\d{6} of \$0\.0001 \(channel matrix/`+regexp.QuoteMeta(a.String())+`, set in chat by @root:example.org`)
	if n := requests("hello room a"); n != 1 {
		t.Errorf("%d model requests for A's turn, want the one that crossed its budget", n)
	}
	h.alice.SendText(a, "more please", h.botUser.ID, inA)
	h.waitBot(a, inA, `Not sent to Claude: this thread's budget is spent`)
	if n := requests("more please"); n != 0 {
		t.Errorf("%d model requests after A's refusal, want none", n)
	}
	h.alice.SendText(b, "again room b", h.botUser.ID, inB)
	h.waitBot(b, inB, `ok: again room b`)
}
