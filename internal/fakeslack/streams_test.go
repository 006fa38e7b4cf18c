package fakeslack

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func TestStreaming(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{Streaming: true, NoBotEcho: true})
	api := newAPI(srv)
	ctx := context.Background()
	parent := srv.Post(alice, general, "<@U0FAKEBOT1> explain")

	_, _, err := api.StartStreamContext(ctx, general, slack.MsgOptionTS(parent), slack.MsgOptionMarkdownText("Hello"))
	slackErr(t, err, "missing_recipient_user_id")
	_, ts, err := api.StartStreamContext(ctx, general, slack.MsgOptionTS(parent),
		slack.MsgOptionRecipientUserID(alice), slack.MsgOptionRecipientTeamID("T0FAKETEAM"), slack.MsgOptionMarkdownText("Hello"))
	if err != nil || ts == "" {
		t.Fatalf("startStream: %q %v", ts, err)
	}
	if m, _ := srv.Message(general, ts); !m.Streaming || m.MarkdownText != "Hello" || m.ThreadTS != parent {
		t.Errorf("started = %+v", m)
	}
	if _, _, err := api.AppendStreamContext(ctx, general, ts, slack.MsgOptionMarkdownText(", **world**")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStreamContext(ctx, general, ts, slack.MsgOptionChunks(slack.NewMarkdownTextChunk("!"), slack.NewTaskUpdateChunk("t1", "Run tests"))); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(general, ts); m.MarkdownText != "Hello, **world**!" || len(m.Chunks) != 1 {
		t.Errorf("grown = %+v", m)
	}
	_, _, _, err = api.UpdateMessageContext(ctx, general, ts, slack.MsgOptionText("x", false))
	slackErr(t, err, "streaming_state_conflict")
	if _, _, err := api.StopStreamContext(ctx, general, ts, slack.MsgOptionBlocks(slack.NewContextBlock("", slack.NewTextBlockObject("mrkdwn", "done in 3s", false, false)))); err != nil {
		t.Fatal(err)
	}
	m, _ := srv.Message(general, ts)
	if m.Streaming || m.MarkdownText != "Hello, **world**!" || !strings.Contains(string(m.Blocks), "done in 3s") {
		t.Errorf("stopped = %+v", m)
	}
	_, _, err = api.AppendStreamContext(ctx, general, ts, slack.MsgOptionMarkdownText("late"))
	slackErr(t, err, "message_not_in_streaming_state")

	// Stopped by the user.
	_, ts2, err := api.StartStreamContext(ctx, general, slack.MsgOptionTS(parent), slack.MsgOptionRecipientUserID(alice), slack.MsgOptionRecipientTeamID("T0FAKETEAM"))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.StopStreamByUser(general, ts2); err != nil {
		t.Fatal(err)
	}
	_, _, err = api.AppendStreamContext(ctx, general, ts2, slack.MsgOptionMarkdownText("more"))
	slackErr(t, err, "stopped_by_user")
	if v := srv.Violations(); len(v) != 2 { // missing_recipient_user_id, streaming_state_conflict
		t.Errorf("violations = %v", v)
	}

	// Without the feature.
	srv2 := Start(t, Options{})
	_, _, err = newAPI(srv2).StartStreamContext(ctx, general, slack.MsgOptionTS(parent), slack.MsgOptionMarkdownText("x"))
	slackErr(t, err, "feature_not_enabled")
}
