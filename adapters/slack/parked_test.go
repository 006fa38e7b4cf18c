package slack_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/store"
)

// TestParkedRequestPingsTheCreator: a scheduled run with the park policy
// asks for a tool nobody is there to approve. Its creator (bob) gets a
// live mention in the run's thread, the only live mention the bot ever
// posts there (the fake's oracle of what Slack would ping), and at the
// approval timeout the request is denied and the run goes on to its end.
func TestParkedRequestPingsTheCreator(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, func(bc *bot.Config, _ *slack.Config) {
		bc.ApprovalTimeout = 3 * time.Second
	})
	s := store.Schedule{ID: 9, Spec: "0 2 * * *", Prompt: "run touch parked.txt", Platform: "slack", Channel: general, CreatedBy: bob, ApprovalPolicy: "park"}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := h.b.RunScheduled(ctx, s, time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("the run: %v", err)
	}
	if !strings.HasPrefix(res.Result, "tool result: Nobody decided this in time") {
		t.Errorf("the run's result %q: want the denial passed to the model", res.Result)
	}
	root := strings.TrimPrefix(res.ThreadKey, "slack/"+general+"/")
	ping := h.waitThread(root, `The scheduled run of #9 waits for your decision on prompt #1 \(Bash\)\. Unless someone decides within [1-3]s, it is denied and the run goes on\.`)
	if live := ping.LiveMentions(); len(live) == 0 || slices.ContainsFunc(live, func(l string) bool { return l != "<@"+bob+">" }) {
		t.Errorf("the notice's live mentions %q, want only <@%s>", live, bob)
	}
	h.waitThread(root, `Bash was denied: nobody decided by the deadline\. The scheduled run of #9 goes on without it\.`)
	for _, m := range h.fs.Thread(general, root) {
		if m.BotID != "" && m.TS != ping.TS && len(m.LiveMentions()) > 0 {
			t.Errorf("another bot message pings %q: %q", m.LiveMentions(), m.VisibleText())
		}
	}
	h.noViolations()
}
