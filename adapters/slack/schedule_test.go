package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/store"
)

// TestScheduledRunOpensAThread: a scheduled run posts a top-level message
// in the target channel and answers in its thread, where people can reply.
func TestScheduledRunOpensAThread(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)
	s := store.Schedule{ID: 7, Spec: "0 2 * * *", Prompt: "nightly check", Platform: "slack", Channel: general, CreatedBy: alice, ApprovalPolicy: "deny"}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := h.b.RunScheduled(ctx, s, time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "ok: nightly check" || res.SessionID == "" || !strings.HasPrefix(res.ThreadKey, "slack/"+general+"/") {
		t.Errorf("result %+v", res)
	}
	root := strings.TrimPrefix(res.ThreadKey, "slack/"+general+"/")
	top, ok := h.fs.Message(general, root)
	if !ok || top.BotID == "" || top.ThreadTS != "" && top.ThreadTS != root || !strings.Contains(top.VisibleText(), "Scheduled run of #7") {
		t.Fatalf("top-level message %+v", top)
	}
	h.waitThread(root, `ok: nightly check`)
	h.fs.Reply(alice, general, root, "thanks, and more")
	h.waitThread(root, `ok: .*thanks, and more`)
	h.noViolations()
}
