package fakeslack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

func TestPostUpdateThreadRoundTrip(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	ctx := context.Background()

	auth, err := api.AuthTestContext(ctx)
	if err != nil || auth.UserID != "U0FAKEBOT1" || auth.BotID != "B0FAKEBOT1" || auth.TeamID != "T0FAKETEAM" {
		t.Fatalf("auth.test = %+v, %v", auth, err)
	}

	parent := srv.Post(alice, general, "<@U0FAKEBOT1> run the tests & report")
	ch, ts, msg, err := api.PostMessageWithResponseContext(ctx, general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("Running tests…", false))
	if err != nil || ch != general || ts == "" {
		t.Fatalf("postMessage: %s %s %v", ch, ts, err)
	}
	if msg.ThreadTimestamp != parent || msg.BotID != "B0FAKEBOT1" || msg.User != "U0FAKEBOT1" || msg.Text != "Running tests…" {
		t.Errorf("returned message = %+v", msg.Msg)
	}
	// A reply's ts as thread_ts lands in the parent's thread.
	_, ts2, m2, err := api.PostMessageWithResponseContext(ctx, general, noUnfurl, slack.MsgOptionTS(ts), slack.MsgOptionText("second", false))
	if err != nil || m2.ThreadTimestamp != parent {
		t.Fatalf("reply to reply: thread_ts %q, err %v", m2.ThreadTimestamp, err)
	}
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "*done*", false, false), nil, nil)}
	if _, _, _, err := api.UpdateMessageContext(ctx, general, ts, slack.MsgOptionText("Tests passed", false), slack.MsgOptionBlocks(blocks...)); err != nil {
		t.Fatal(err)
	}
	// Text-only update keeps the blocks (chat.update).
	if _, _, _, err := api.UpdateMessageContext(ctx, general, ts, slack.MsgOptionText("Tests passed!", false)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.DeleteMessageContext(ctx, general, ts2); err != nil {
		t.Fatal(err)
	}
	th := srv.Thread(general, parent)
	if len(th) != 2 || th[0].User != alice || th[0].Text != "<@U0FAKEBOT1> run the tests &amp; report" {
		t.Fatalf("thread = %+v", th)
	}
	if th[1].Text != "Tests passed!" || !th[1].Edited || !strings.Contains(string(th[1].Blocks), "*done*") {
		t.Errorf("updated reply = %+v (blocks %s)", th[1], th[1].Blocks)
	}
	var bl []map[string]any
	_ = json.Unmarshal(th[1].Blocks, &bl)
	if len(bl) != 1 || bl[0]["block_id"] == "" || bl[0]["block_id"] == nil {
		t.Errorf("stored blocks get a block_id: %s", th[1].Blocks)
	}

	msgs, hasMore, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: general, Timestamp: parent})
	if err != nil || hasMore || len(msgs) != 2 || msgs[0].ReplyCount != 1 || msgs[1].Text != "Tests passed!" || msgs[1].Edited == nil {
		t.Fatalf("replies = %+v %v %v", msgs, hasMore, err)
	}
	// Updating or deleting a person's message is not allowed; a deleted
	// message is gone.
	_, _, _, err = api.UpdateMessageContext(ctx, general, parent, slack.MsgOptionText("x", false))
	slackErr(t, err, "cant_update_message")
	_, _, err = api.DeleteMessageContext(ctx, general, ts2)
	slackErr(t, err, "message_not_found")

	// A deleted parent: the reply is posted unthreaded.
	if err := srv.DeleteMessage(alice, general, parent); err != nil {
		t.Fatal(err)
	}
	_, _, m3, err := api.PostMessageWithResponseContext(ctx, general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("late", false))
	if err != nil || m3.ThreadTimestamp != "" {
		t.Fatalf("reply to deleted parent: thread_ts %q err %v", m3.ThreadTimestamp, err)
	}
	msgs, _, _, err = api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: general, Timestamp: parent})
	if err != nil || len(msgs) != 2 || msgs[0].SubType != "tombstone" {
		t.Fatalf("replies of a deleted parent = %+v %v", msgs, err)
	}

	link, err := api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: general, Ts: ts})
	if err != nil || !strings.Contains(link, "/archives/C0GENERAL1/p"+strings.ReplaceAll(ts, ".", "")) || !strings.Contains(link, "thread_ts="+parent) {
		t.Errorf("permalink = %q, %v", link, err)
	}
	if len(srv.Calls("chat.postMessage")) != 3 || srv.Calls("chat.update")[0].Param("ts") != ts {
		t.Errorf("calls = %+v", srv.Calls(""))
	}
	noViolations(t, srv)
}

func TestMentionYieldsMessageAndAppMention(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	s := runSocket(t, newAPI(srv), true)

	ts := srv.Post(alice, general, "<@U0FAKEBOT1> run the unit tests & summarise failures")
	seen := map[string]string{} // type → event_id
	for len(seen) < 2 {
		evt := s.next(nil)
		cb, inner := callback(evt)
		switch ev := inner.Data.(type) {
		case *slackevents.AppMentionEvent:
			if ev.TimeStamp != ts || ev.Channel != general || ev.User != alice || ev.Text != "<@U0FAKEBOT1> run the unit tests &amp; summarise failures" {
				t.Errorf("app_mention = %+v", ev)
			}
			if len(ev.Blocks.BlockSet) != 1 {
				t.Errorf("app_mention blocks = %+v", ev.Blocks)
			}
		case *slackevents.MessageEvent:
			if ev.TimeStamp != ts || ev.Channel != general || ev.ChannelType != "channel" || ev.BotID != "" {
				t.Errorf("message = %+v", ev)
			}
		default:
			t.Fatalf("unexpected event %T", inner.Data)
		}
		if cb.TeamID != "T0FAKETEAM" || cb.APIAppID != "A0FAKEAPP1" || len(cb.Authorizations) != 1 || cb.Authorizations[0].UserID != "U0FAKEBOT1" || !cb.Authorizations[0].IsBot {
			t.Errorf("outer = %+v", cb)
		}
		seen[inner.Type] = cb.EventID
	}
	if seen["message"] == seen["app_mention"] || seen["message"] == "" {
		t.Errorf("event ids = %v", seen)
	}

	// A reply in the thread: message with thread_ts and parent_user_id.
	reply := srv.Reply(bob, general, ts, "also check the flaky one")
	evt := s.next(innerType("message"))
	_, inner := callback(evt)
	if me := inner.Data.(*slackevents.MessageEvent); me.TimeStamp != reply || me.ThreadTimeStamp != ts || me.Message.ParentUserId != alice {
		t.Errorf("thread message = %+v", me)
	}

	// DMs: message.im, no app_mention even with a mention.
	dm, dmTS := srv.DM(alice, "<@U0FAKEBOT1> hi")
	evt = s.next(nil)
	_, inner = callback(evt)
	if me, ok := inner.Data.(*slackevents.MessageEvent); !ok || me.Channel != dm || me.ChannelType != "im" || me.TimeStamp != dmTS {
		t.Errorf("dm event = %+v", inner.Data)
	}
	s.none(200 * time.Millisecond)

	// The bot's own post comes back as a message with bot_id; edits and
	// deletes as message_changed / message_deleted.
	api := newAPI(srv)
	_, botTS, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(ts), slack.MsgOptionText("Running tests…", false))
	if err != nil {
		t.Fatal(err)
	}
	_, inner = callback(s.next(nil))
	if me := inner.Data.(*slackevents.MessageEvent); me.BotID != "B0FAKEBOT1" || me.User != "U0FAKEBOT1" || me.SubType != "" || me.TimeStamp != botTS {
		t.Errorf("echo = %+v", me)
	}
	if _, _, _, err := api.UpdateMessage(general, botTS, slack.MsgOptionText("Approved", false)); err != nil {
		t.Fatal(err)
	}
	_, inner = callback(s.next(nil))
	if me := inner.Data.(*slackevents.MessageEvent); me.SubType != "message_changed" || me.Message.Text != "Approved" || me.PreviousMessage.Text != "Running tests…" || me.Message.Edited == nil {
		t.Errorf("message_changed = %+v", me)
	}
	if err := srv.EditMessage(bob, general, reply, "never mind"); err != nil {
		t.Fatal(err)
	}
	_, inner = callback(s.next(nil))
	if me := inner.Data.(*slackevents.MessageEvent); me.SubType != "message_changed" || me.Message.Text != "never mind" || me.Message.User != bob {
		t.Errorf("user edit = %+v", me)
	}
	if err := srv.DeleteMessage(bob, general, reply); err != nil {
		t.Fatal(err)
	}
	_, inner = callback(s.next(nil))
	if me := inner.Data.(*slackevents.MessageEvent); me.SubType != "message_deleted" || me.DeletedTimeStamp != reply {
		t.Errorf("user delete = %+v", me)
	}
	if err := srv.React(alice, general, botTS, "+1"); err != nil {
		t.Fatal(err)
	}
	_, inner = callback(s.next(nil))
	if re, ok := inner.Data.(*slackevents.ReactionAddedEvent); !ok || re.Reaction != "+1" || re.Item.Timestamp != botTS {
		t.Errorf("reaction_added = %+v", inner.Data)
	}
	noViolations(t, srv)
}

func TestFilesReactionsStatusAndLookups(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	ctx := context.Background()
	parent := srv.Post(alice, general, "logs please")

	content := "line 1\nline 2\n"
	f, err := api.UploadFileContext(ctx, slack.UploadFileParameters{Filename: "build.log", FileSize: len(content), Content: content, Channel: general, ThreadTimestamp: parent, Title: "Build log"})
	if err != nil {
		t.Fatal(err)
	}
	th := srv.Thread(general, parent)
	if len(th) != 2 || len(th[1].Files) != 1 || string(th[1].Files[0].Content) != content || th[1].Files[0].ID != f.ID || th[1].Files[0].Title != "Build log" {
		t.Fatalf("thread = %+v", th)
	}

	if err := api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage(general, parent)); err != nil {
		t.Fatal(err)
	}
	slackErr(t, api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage(general, parent)), "already_reacted")
	if m, _ := srv.Message(general, parent); len(m.Reactions["eyes"]) != 1 {
		t.Errorf("reactions = %v", m.Reactions)
	}
	if err := api.RemoveReactionContext(ctx, "eyes", slack.NewRefToMessage(general, parent)); err != nil {
		t.Fatal(err)
	}
	slackErr(t, api.RemoveReactionContext(ctx, "eyes", slack.NewRefToMessage(general, parent)), "no_reaction")

	if err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: general, ThreadTS: parent, Status: "is thinking…"}); err != nil {
		t.Fatal(err)
	}
	if st := srv.Status(general, parent); st != "is thinking…" {
		t.Errorf("status = %q", st)
	}
	if _, _, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("answer", false)); err != nil {
		t.Fatal(err)
	}
	if st := srv.Status(general, parent); st != "" {
		t.Errorf("status after the reply = %q", st)
	}

	u, err := api.GetUserInfoContext(ctx, alice)
	if err != nil || u.Name != "alice" || u.Profile.Email != "alice@example.com" || u.IsBot {
		t.Errorf("users.info = %+v %v", u, err)
	}
	_, err = api.GetUserInfoContext(ctx, "U0NOBODY01")
	slackErr(t, err, "user_not_found")
	c, err := api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: general})
	if err != nil || c.Name != "general" || !c.IsChannel || !c.IsMember {
		t.Errorf("conversations.info = %+v %v", c, err)
	}
	dm, _ := srv.DM(bob, "hi")
	c, err = api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: dm})
	if err != nil || !c.IsIM || c.User != bob {
		t.Errorf("conversations.info(im) = %+v %v", c, err)
	}
	_, _, err = api.PostMessage("C0NOPE0001", noUnfurl, slack.MsgOptionText("x", false))
	slackErr(t, err, "channel_not_found")
	srv.AddChannel(Channel{ID: "C0PRIV0001", Name: "private", NotMember: true})
	_, _, err = api.PostMessage("C0PRIV0001", noUnfurl, slack.MsgOptionText("x", false))
	slackErr(t, err, "not_in_channel")
	noViolations(t, srv)

	bad := slack.New("xoxb-wrong", slack.OptionAPIURL(srv.URL+"/api/"))
	_, err = bad.AuthTest()
	slackErr(t, err, "invalid_auth")
	appTok := slack.New(srv.Opts.AppToken, slack.OptionAPIURL(srv.URL+"/api/"))
	_, err = appTok.AuthTest()
	slackErr(t, err, "not_allowed_token_type")
	if v := srv.Violations(); len(v) != 2 {
		t.Errorf("violations = %v", v)
	}
}
