package slack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testkit"
)

const setStatus = "assistant.threads.setStatus"

// TestStatusDoesNotHoldThePrompt: Slack answers setStatus only when the
// test lets it, yet the prompt reaches the model API while the "is
// thinking…" call still waits; once released, the statuses land in the
// order they were set, so the thread ends with none.
func TestStatusDoesNotHoldThePrompt(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)
	hold := h.fs.Hold(setStatus)
	ts := h.fs.Post(alice, general, mention+"hello while slack is slow")

	testkit.WaitForf(t, wait, func() bool { return h.asked("hello while slack is slow") }, func() string {
		return fmt.Sprintf("the prompt never reached the model API; setStatus calls waiting: %d", hold.Waiting())
	})
	// The order that matters: the status call was made and is still
	// unanswered when the model has the prompt.
	if !h.fs.WaitFor(wait, func() bool { return hold.Arrived() > 0 }) {
		t.Fatal("no setStatus call was made")
	}
	if hold.Waiting() == 0 {
		t.Fatal("setStatus was answered before the test released it")
	}
	h.waitThread(ts, `ok: hello while slack is slow`)
	h.waitThread(ts, `✓ .* turns?$`)
	hold.Release()

	if !h.fs.WaitFor(wait, func() bool {
		calls := h.fs.Calls(setStatus)
		return len(calls) >= 2 && calls[len(calls)-1].Params["status"] == ""
	}) {
		t.Fatalf("the status was not cleared last: %+v", h.fs.Calls(setStatus))
	}
	if got := h.fs.Status(general, ts); got != "" {
		t.Errorf("status after the turn: %q", got)
	}
	if calls := h.fs.Calls(setStatus); calls[0].Params["status"] != "is thinking…" {
		t.Errorf("first status %q", calls[0].Params["status"])
	}
	h.noViolations()
}

// asked reports whether the model API has received a request whose last
// user text contains s.
func (h *harness) asked(s string) bool {
	for _, r := range h.api.Requests() {
		if strings.Contains(r.LastUserText(), s) {
			return true
		}
	}
	return false
}
