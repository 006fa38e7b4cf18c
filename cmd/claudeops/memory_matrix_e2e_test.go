package main

import (
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestMemoryMatrix: on a real homeserver, a fact remembered in room A
// reaches a new session of A and none of room B (the fake model API's
// requests are the oracle); Claude's proposal shows with its reactions,
// stores nothing, and alice's ✅ stores it: the next session is given it.
func TestMemoryMatrix(t *testing.T) {
	r := startMatrixTools(t, toolScript(map[string]fakeanthropic.Block{
		"propose it": fakeanthropic.ToolUse(rememberTool, map[string]string{"fact": "the on-call rota lives in ops/rota.md"}),
	}), false)
	cmd := r.start()
	roomA, roomB := r.room(false), r.room(false)
	alice, log := r.alice, func() string { return "(in the test's output)" }
	has := func(s string) func(dendrite.Message) bool {
		return func(m dendrite.Message) bool { return strings.Contains(m.Body, s) }
	}
	sysOf := func(text string) string { return strings.Join(requestFor(t, r.api, text, log).System, "\n") }

	root := alice.SendText(roomA, "remember room A deploys on Tuesdays", r.bot.ID, "")
	r.botSaid(roomA, root, "the fact stored", has("Remembered for this channel"))
	inA := alice.SendText(roomA, "hello from A", r.bot.ID, "")
	inB := alice.SendText(roomB, "hello from B", r.bot.ID, "")
	if sys := sysOf("hello from A"); !strings.Contains(sys, "1. room A deploys on Tuesdays") {
		t.Errorf("room A's session is given:\n%s", sys)
	}
	if sys := sysOf("hello from B"); strings.Contains(sys, "Tuesdays") || strings.Contains(sys, "channel-instructions") {
		t.Errorf("room B's session is given:\n%s", sys)
	}
	r.botSaid(roomA, inA, "the answer", has("ok: hello from A"))
	r.botSaid(roomB, inB, "the answer", has("ok: hello from B"))

	ask := alice.SendText(roomA, "propose it", r.bot.ID, "")
	offer := r.botSaid(roomA, ask, "the proposal", has("Claude proposes a fact for this channel to remember"))
	if !strings.Contains(offer.Body, "the on-call rota lives in ops/rota.md") || !strings.Contains(offer.Body, "✅") {
		t.Errorf("the proposal shows %q", offer.Body)
	}
	r.botSaid(roomA, ask, "the model's answer", has("the tool has answered"))
	before := alice.SendText(roomA, "before the reaction", r.bot.ID, "")
	if sys := sysOf("before the reaction"); strings.Contains(sys, "on-call rota") {
		t.Errorf("a proposal nobody accepted is given to sessions:\n%s", sys)
	}
	r.botSaid(roomA, before, "the answer", has("ok: before the reaction"))
	alice.React(roomA, offer.ID, "✅")
	r.botSaid(roomA, ask, "the proposal decided", has("Remembered by"))
	after := alice.SendText(roomA, "after the reaction", r.bot.ID, "")
	if sys := sysOf("after the reaction"); !strings.Contains(sys, "2. the on-call rota lives in ops/rota.md") {
		t.Errorf("the accepted fact is not given to a new session:\n%s", sys)
	}
	r.botSaid(roomA, after, "the answer", has("ok: after the reaction"))
	for _, req := range r.api.Requests() {
		if tr := req.Transcript(); strings.Contains(tr, "Tuesdays") || strings.Contains(tr, "ops/rota.md") && !strings.Contains(tr, "propose it") {
			t.Errorf("a fact is in a request's messages:\n%s", tr)
		}
	}
	r.stop(cmd)
}
