package matrix_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/store"
)

// TestScheduledRunOpensAThread: a scheduled run posts a top-level notice in
// the room and answers in its thread, where people can reply.
func TestScheduledRunOpensAThread(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	s := store.Schedule{ID: 7, Spec: "0 2 * * *", Prompt: "nightly check", Platform: "matrix", Channel: room.String(), CreatedBy: h.alice.User.ID.String(), ApprovalPolicy: "deny"}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := h.b.RunScheduled(ctx, s, time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	prefix := "matrix/" + room.String() + "/"
	if res.Result != "ok: nightly check" || res.SessionID == "" || !strings.HasPrefix(res.ThreadKey, prefix) {
		t.Fatalf("result %+v", res)
	}
	root := id.EventID(strings.TrimPrefix(res.ThreadKey, prefix))
	top := h.waitBot(room, root, `Scheduled run of #7`)
	if top.ID != root {
		t.Errorf("the run's first message %s is not the thread root %s", top.ID, root)
	}
	if rel, _ := top.Raw["m.relates_to"].(map[string]any); rel != nil {
		t.Errorf("the run's first message is not top-level: %v", rel)
	}
	h.waitBot(room, root, `^ok: nightly check$`)
	h.alice.SendText(room, "thanks, and more", "", root)
	h.waitBot(room, root, `ok: .*thanks, and more`)
}
