package fakeslack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// waitLong bounds waits that normally end in milliseconds.
const waitLong = 20 * time.Second

const (
	alice   = "U0ALICE001"
	bob     = "U0BOB00001"
	general = "C0GENERAL1"
)

// noUnfurl turns link and media previews off, as every bot post must.
var noUnfurl = slack.MsgOptionCompose(slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())

func newAPI(srv *Server) *slack.Client {
	return slack.New(srv.Opts.BotToken, slack.OptionAPIURL(srv.URL+"/api/"), slack.OptionAppLevelToken(srv.Opts.AppToken))
}

// sock runs a slack-go Socket Mode client against the fake.
type sock struct {
	t         *testing.T
	sm        *socketmode.Client
	events    chan socketmode.Event
	connected atomic.Int32
}

func runSocket(t *testing.T, api *slack.Client, autoAck bool) *sock {
	t.Helper()
	s := &sock{t: t, sm: socketmode.New(api), events: make(chan socketmode.Event, 512)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = s.sm.RunContext(ctx) }()
	go func() {
		defer wg.Done()
		for {
			select {
			case evt := <-s.sm.Events:
				switch evt.Type {
				case socketmode.EventTypeConnected:
					s.connected.Add(1)
				case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
					if autoAck {
						_ = s.sm.Ack(*evt.Request)
					}
					s.events <- evt
				case socketmode.EventTypeErrorBadMessage:
					s.events <- evt
				case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError, socketmode.EventTypeInvalidAuth:
					t.Logf("socket mode client: %s %+v", evt.Type, evt.Data)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s
}

// next returns the next event matching match (others are dropped).
func (s *sock) next(match func(socketmode.Event) bool) socketmode.Event {
	s.t.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case evt := <-s.events:
			if match == nil || match(evt) {
				return evt
			}
		case <-timeout:
			s.t.Fatalf("no matching socket mode event within %v", waitLong)
			return socketmode.Event{}
		}
	}
}

func (s *sock) none(d time.Duration) {
	s.t.Helper()
	select {
	case evt := <-s.events:
		s.t.Fatalf("unexpected event %s: %s", evt.Type, evt.Request.Payload)
	case <-time.After(d):
	}
}

func callback(evt socketmode.Event) (*slackevents.EventsAPICallbackEvent, slackevents.EventsAPIInnerEvent) {
	e, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok {
		return nil, slackevents.EventsAPIInnerEvent{}
	}
	cb, _ := e.Data.(*slackevents.EventsAPICallbackEvent)
	return cb, e.InnerEvent
}

func innerType(typ string) func(socketmode.Event) bool {
	return func(evt socketmode.Event) bool {
		_, inner := callback(evt)
		return inner.Type == typ
	}
}

func noViolations(t *testing.T, srv *Server) {
	t.Helper()
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("violations:\n  %s", strings.Join(v, "\n  "))
	}
}

func slackErr(t *testing.T, err error, code string) slack.SlackErrorResponse {
	t.Helper()
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != code {
		t.Fatalf("error = %v, want Slack error %s", err, code)
	}
	return se
}

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
	// Text-only update keeps the blocks (SLACK.md §7.6).
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

func TestUnackedEventRedelivered(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{AckTimeout: 700 * time.Millisecond})
	s := runSocket(t, newAPI(srv), false)

	_, ts := srv.DM(alice, "hello")
	first := s.next(nil)
	cb, _ := callback(first)
	if first.Request.RetryAttempt != 0 || first.Request.RetryReason != "" {
		t.Errorf("first delivery retry = %d %q", first.Request.RetryAttempt, first.Request.RetryReason)
	}
	// Not acked: redelivered with a new envelope_id, the same event_id.
	second := s.next(nil)
	cb2, inner := callback(second)
	if cb2.EventID != cb.EventID || second.Request.EnvelopeID == first.Request.EnvelopeID ||
		second.Request.RetryAttempt != 1 || second.Request.RetryReason != "timeout" {
		t.Errorf("redelivery: event %s→%s envelope %s→%s retry %d %q", cb.EventID, cb2.EventID,
			first.Request.EnvelopeID, second.Request.EnvelopeID, second.Request.RetryAttempt, second.Request.RetryReason)
	}
	if me := inner.Data.(*slackevents.MessageEvent); me.TimeStamp != ts {
		t.Errorf("redelivered event = %+v", me)
	}
	if err := s.sm.Ack(*second.Request); err != nil {
		t.Fatal(err)
	}
	if !srv.WaitFor(waitLong, func() bool {
		envs := srv.Envelopes()
		return len(envs) == 2 && envs[1].Acked
	}) {
		t.Fatalf("envelopes = %+v", srv.Envelopes())
	}
	s.none(500 * time.Millisecond) // acked: no third delivery
	envs := srv.Envelopes()
	if envs[0].Acked || envs[0].EventID != envs[1].EventID || envs[1].RetryAttempt != 1 {
		t.Errorf("envelopes = %+v", envs)
	}
	noViolations(t, srv)
}

func TestEventsNeverAckedAreAViolation(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{AckTimeout: 50 * time.Millisecond})
	s := runSocket(t, newAPI(srv), false)
	srv.DM(alice, "hello")
	for i := 0; i < 4; i++ {
		if evt := s.next(nil); evt.Request.RetryAttempt != i {
			t.Fatalf("delivery %d: retry_attempt %d", i, evt.Request.RetryAttempt)
		}
	}
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Violations()) == 1 }) {
		t.Fatalf("violations = %v", srv.Violations())
	}
	if v := srv.Violations()[0]; !strings.Contains(v, "never acked") {
		t.Errorf("violation = %q", v)
	}
}

func TestQueuedUntilConnected(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	ts := srv.Post(alice, general, "before anyone listens")
	s := runSocket(t, newAPI(srv), true)
	_, inner := callback(s.next(nil))
	if me := inner.Data.(*slackevents.MessageEvent); me.TimeStamp != ts {
		t.Errorf("queued event = %+v", me)
	}
	noViolations(t, srv)
}

func TestDisconnectRefreshRequestedReconnects(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	s := runSocket(t, newAPI(srv), true)
	if !srv.WaitConnections(1, waitLong) {
		t.Fatal("no connection")
	}
	srv.Disconnect("refresh_requested")
	if !srv.WaitFor(waitLong, func() bool { return s.connected.Load() == 2 && srv.Connections() == 1 }) {
		t.Fatalf("connected %d times, %d open", s.connected.Load(), srv.Connections())
	}
	ts := srv.Post(alice, general, "after the refresh")
	_, inner := callback(s.next(nil))
	if me := inner.Data.(*slackevents.MessageEvent); me.TimeStamp != ts {
		t.Errorf("event = %+v", me)
	}
	envs := srv.Envelopes()
	if envs[len(envs)-1].Conn != 2 {
		t.Errorf("delivered on socket %d, want the new socket 2", envs[len(envs)-1].Conn)
	}
	if n := len(srv.Calls("apps.connections.open")); n != 2 {
		t.Errorf("apps.connections.open called %d times", n)
	}
	noViolations(t, srv)
}

func TestDropSocketsReconnects(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	s := runSocket(t, newAPI(srv), true)
	if !srv.WaitConnections(1, waitLong) {
		t.Fatal("no connection")
	}
	srv.DropSockets()
	if !srv.WaitFor(waitLong, func() bool { return s.connected.Load() == 2 && srv.Connections() == 1 }) {
		t.Fatalf("connected %d times, %d open", s.connected.Load(), srv.Connections())
	}
	ts := srv.Post(alice, general, "after the drop")
	_, inner := callback(s.next(nil))
	if me := inner.Data.(*slackevents.MessageEvent); me.TimeStamp != ts {
		t.Errorf("event = %+v", me)
	}
	noViolations(t, srv)
}

func TestSeveralConnectionsEachEnvelopeToOne(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	api := newAPI(srv)
	s1, s2 := runSocket(t, api, true), runSocket(t, api, true)
	if !srv.WaitConnections(2, waitLong) {
		t.Fatal("want 2 connections")
	}
	for i := 0; i < 6; i++ {
		srv.DM(alice, "msg")
	}
	got := 0
	timeout := time.After(waitLong)
	for got < 6 {
		select {
		case <-s1.events:
		case <-s2.events:
		case <-timeout:
			t.Fatalf("got %d of 6 events", got)
		}
		got++
	}
	s1.none(200 * time.Millisecond)
	s2.none(0)
	conns := map[int]int{}
	for _, e := range srv.Envelopes() {
		conns[e.Conn]++
	}
	if len(conns) != 2 {
		t.Errorf("envelopes per socket = %v", conns)
	}
	noViolations(t, srv)
}

func TestStrictRateLimit(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{Strict: true, NoBotEcho: true})
	api := newAPI(srv)
	_, ts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionText("x", false))
	if err != nil {
		t.Fatal(err)
	}
	// chat.update is Tier 3 (50/min) with a burst of 5.
	var rl *slack.RateLimitedError
	for i := 0; i < 10; i++ {
		_, _, _, err = api.UpdateMessage(general, ts, slack.MsgOptionText("y", false))
		if errors.As(err, &rl) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if rl == nil || rl.RetryAfter < time.Second || rl.RetryAfter%time.Second != 0 {
		t.Fatalf("want *slack.RateLimitedError with whole-second Retry-After, got %v", err)
	}
	calls := srv.Calls("chat.update")
	if last := calls[len(calls)-1]; last.Status != 429 || last.Error != "ratelimited" || len(calls) < 6 || calls[len(calls)-2].Status != 200 {
		t.Errorf("calls = %d, last %+v", len(calls), last)
	}
	noViolations(t, srv)
	// Calling again inside the Retry-After window is a violation.
	_, _, _, _ = api.UpdateMessage(general, ts, slack.MsgOptionText("z", false))
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "chat.update called") {
		t.Errorf("violations = %v", v)
	}

	// chat.postMessage: ~1/s per channel with a burst of 3; other channels unaffected.
	srv2 := Start(t, Options{Strict: true, NoBotEcho: true})
	api2 := newAPI(srv2)
	srv2.AddChannel(Channel{ID: "C0OTHER001", Name: "other"})
	var limited bool
	for i := 0; i < 10 && !limited; i++ {
		_, _, err := api2.PostMessage(general, noUnfurl, slack.MsgOptionText("x", false))
		limited = errors.As(err, &rl)
	}
	if !limited {
		t.Fatal("chat.postMessage not limited per channel")
	}
	if _, _, err := api2.PostMessage("C0OTHER001", noUnfurl, slack.MsgOptionText("x", false)); err != nil {
		t.Errorf("other channel: %v", err)
	}
	// Honouring Retry-After: fine again, no violation.
	time.Sleep(rl.RetryAfter)
	if _, _, err := api2.PostMessage(general, noUnfurl, slack.MsgOptionText("x", false)); err != nil {
		t.Errorf("after Retry-After: %v", err)
	}
	noViolations(t, srv2)
}

func TestFaults(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	srv.FailNext("chat.postMessage", "message_limit_exceeded")
	_, _, err := api.PostMessage(general, noUnfurl, slack.MsgOptionText("x", false))
	slackErr(t, err, "message_limit_exceeded")
	srv.Fail("chat.postMessage", Fault{RetryAfter: 7})
	_, _, err = api.PostMessage(general, noUnfurl, slack.MsgOptionText("x", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Fatalf("want 429 Retry-After 7, got %v", err)
	}
	srv.Fail("users.info", Fault{Status: 500, Error: "internal_error"})
	_, err = api.GetUserInfo(alice)
	var sce slack.StatusCodeError
	if !errors.As(err, &sce) || sce.Code != 500 {
		t.Fatalf("want StatusCodeError 500, got %v", err)
	}
	if _, _, err := api.PostMessage(general, noUnfurl, slack.MsgOptionText("x", false)); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) != 1 {
		t.Errorf("violations = %v", v)
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	text := func(n int) *slack.TextBlockObject {
		return slack.NewTextBlockObject("mrkdwn", strings.Repeat("a", n), false, false)
	}
	plain := func(s string) *slack.TextBlockObject { return slack.NewTextBlockObject("plain_text", s, false, false) }
	button := func(id, label string) *slack.ButtonBlockElement {
		return slack.NewButtonBlockElement(id, "v", plain(label))
	}

	cases := []struct {
		name string
		opts []slack.MsgOption
		code string
		msgs []string
	}{
		{"section text", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewSectionBlock(text(3001), nil, nil))},
			"invalid_blocks", []string{"[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]"}},
		{"section text at the limit", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewSectionBlock(text(3000), nil, nil))}, "", nil},
		{"too many blocks", []slack.MsgOption{slack.MsgOptionBlocks(func() []slack.Block {
			var bs []slack.Block
			for i := 0; i < 51; i++ {
				bs = append(bs, slack.NewDividerBlock())
			}
			return bs
		}()...)}, "invalid_blocks", []string{"[ERROR] no more than 50 items allowed [json-pointer:/blocks]"}},
		{"header", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewHeaderBlock(plain(strings.Repeat("h", 151))))},
			"invalid_blocks", []string{"[ERROR] must be less than 151 characters [json-pointer:/blocks/0/text/text]"}},
		{"button text", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", button("x", strings.Repeat("b", 76))))},
			"invalid_blocks", []string{"[ERROR] must be less than 76 characters [json-pointer:/blocks/0/elements/0/text/text]"}},
		{"duplicate action_id", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", button("x", "1"), button("x", "2")))},
			"invalid_blocks", []string{"[ERROR] duplicate action_id: x [json-pointer:/blocks/0/elements/1/action_id]"}},
		{"duplicate block_id", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", button("x", "1")), slack.NewActionBlock("a", button("y", "2")))},
			"invalid_blocks", []string{"[ERROR] duplicate block_id: a [json-pointer:/blocks/1/block_id]"}},
		{"26 actions", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", func() []slack.BlockElement {
			var els []slack.BlockElement
			for i := 0; i < 26; i++ {
				els = append(els, button("b"+itoa(i), "x"))
			}
			return els
		}()...))}, "invalid_blocks", []string{"[ERROR] no more than 25 items allowed [json-pointer:/blocks/0/elements]"}},
		{"option value", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", slack.NewOptionsSelectBlockElement("static_select", plain("pick"), "s",
			slack.NewOptionBlockObject(strings.Repeat("v", 151), plain("x"), nil))))},
			"invalid_blocks", []string{"[ERROR] must be less than 151 characters [json-pointer:/blocks/0/elements/0/options/0/value]"}},
		{"11 checkboxes", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewActionBlock("a", slack.NewCheckboxGroupsBlockElement("c", func() []*slack.OptionBlockObject {
			var os []*slack.OptionBlockObject
			for i := 0; i < 11; i++ {
				os = append(os, slack.NewOptionBlockObject(itoa(i), plain("x"), nil))
			}
			return os
		}()...)))}, "invalid_blocks", []string{"[ERROR] no more than 10 items allowed [json-pointer:/blocks/0/elements/0/options]"}},
		{"markdown total", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewMarkdownBlock("", strings.Repeat("m", 7000)), slack.NewMarkdownBlock("", strings.Repeat("m", 5001)))},
			"invalid_blocks", []string{"[ERROR] total length of markdown blocks must be less than 12001 characters [json-pointer:/blocks]"}},
		{"blocks too long overall", []slack.MsgOption{slack.MsgOptionBlocks(
			slack.NewSectionBlock(text(3000), nil, nil), slack.NewSectionBlock(text(3000), nil, nil), slack.NewSectionBlock(text(3000), nil, nil),
			slack.NewSectionBlock(text(3000), nil, nil), slack.NewSectionBlock(text(3000), nil, nil))}, "msg_blocks_too_long", nil},
		{"agent UI block", []slack.MsgOption{slack.MsgOptionBlocks(&slack.UnknownBlock{Type: "alert"})},
			"invalid_blocks", []string{"[ERROR] unsupported block type: alert [json-pointer:/blocks/0/type]"}},
		{"markdown_text with text", []slack.MsgOption{slack.MsgOptionText("t", false), slack.MsgOptionMarkdownText("**m**")}, "markdown_text_conflict", nil},
		{"markdown_text too long", []slack.MsgOption{slack.MsgOptionMarkdownText(strings.Repeat("m", 12001))}, "msg_too_long", nil},
		{"markdown_text", []slack.MsgOption{slack.MsgOptionMarkdownText("**bold**")}, "", nil},
		{"no text", []slack.MsgOption{slack.MsgOptionText("", false)}, "no_text", nil},
	}
	wantViolations := 0
	for _, c := range cases {
		_, _, err := api.PostMessage(general, append([]slack.MsgOption{noUnfurl}, c.opts...)...)
		if c.code == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		wantViolations++
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || se.Err != c.code {
			t.Errorf("%s: err = %v, want %s", c.name, err, c.code)
			continue
		}
		if c.msgs != nil && strings.Join(se.ResponseMetadata.Messages, "|") != strings.Join(c.msgs, "|") {
			t.Errorf("%s: messages = %q, want %q", c.name, se.ResponseMetadata.Messages, c.msgs)
		}
	}
	if got := len(srv.Violations()); got != wantViolations {
		t.Errorf("%d violations, want %d: %v", got, wantViolations, srv.Violations())
	}

	// Text: postMessage truncates past 40,000 (a violation); update and
	// postEphemeral answer msg_too_long past 4,000.
	_, ts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionText(strings.Repeat("t", 40001), false))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(general, ts); len(m.Text) != 40000 {
		t.Errorf("stored text length %d", len(m.Text))
	}
	_, _, _, err = api.UpdateMessage(general, ts, slack.MsgOptionText(strings.Repeat("t", 4001), false))
	slackErr(t, err, "msg_too_long")
	_, err = api.PostEphemeral(general, alice, slack.MsgOptionText(strings.Repeat("t", 4001), false))
	slackErr(t, err, "msg_too_long")
	if got := len(srv.Violations()); got != wantViolations+3 {
		t.Errorf("%d violations, want %d: %v", got, wantViolations+3, srv.Violations())
	}
	// A raw blocks argument that is not an array.
	_, _, err = api.PostMessage(general, noUnfurl, slack.UnsafeMsgOptionEndpoint(srv.URL+"/api/chat.postMessage", func(v url.Values) { v.Set("blocks", `{"type":"divider"}`) }))
	slackErr(t, err, "invalid_blocks_format")
}

func TestClickSelectCheck(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	s := runSocket(t, api, true)
	plain := func(s string) *slack.TextBlockObject { return slack.NewTextBlockObject("plain_text", s, false, false) }

	parent := srv.Post(bob, general, "do it")
	s.next(nil) // the message event
	allow := slack.NewButtonBlockElement("perm_allow", "toolu_01ABC", plain("Approve")).WithStyle(slack.StylePrimary)
	deny := slack.NewButtonBlockElement("perm_deny", "toolu_01ABC", plain("Deny")).WithStyle(slack.StyleDanger)
	_, ts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("Claude wants to run Bash: ls -la", false),
		slack.MsgOptionBlocks(
			slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "*Bash* wants to run `ls -la`", false, false), nil, nil, slack.SectionBlockOptionBlockID("perm-text")),
			slack.NewActionBlock("perm:toolu_01ABC", allow, deny),
		))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Click(alice, general, ts, "perm_allow"); err != nil {
		t.Fatal(err)
	}
	evt := s.next(nil)
	if evt.Type != socketmode.EventTypeInteractive || evt.Request.AcceptsResponsePayload {
		t.Fatalf("event %s accepts %v", evt.Type, evt.Request.AcceptsResponsePayload)
	}
	cb := evt.Data.(slack.InteractionCallback)
	if cb.Type != slack.InteractionTypeBlockActions || cb.User.ID != alice || cb.User.Name != "alice" || cb.Team.ID != "T0FAKETEAM" {
		t.Errorf("callback = %+v", cb)
	}
	if c := cb.Container; c.Type != "message" || c.MessageTs != ts || c.ChannelID != general || c.ThreadTs != parent || c.IsEphemeral {
		t.Errorf("container = %+v", c)
	}
	if len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("actions = %+v", cb.ActionCallback)
	}
	a := cb.ActionCallback.BlockActions[0]
	if a.ActionID != "perm_allow" || a.BlockID != "perm:toolu_01ABC" || a.Value != "toolu_01ABC" || a.Text.Text != "Approve" || a.ActionTs == "" {
		t.Errorf("action = %+v", a)
	}
	if cb.Message.Timestamp != ts || len(cb.Message.Blocks.BlockSet) != 2 || cb.Channel.ID != general || cb.Channel.Name != "general" {
		t.Errorf("message = %+v", cb.Message)
	}
	if !strings.HasPrefix(cb.ResponseURL, srv.URL+"/actions/T0FAKETEAM/") || cb.TriggerID == "" {
		t.Errorf("response_url %q trigger %q", cb.ResponseURL, cb.TriggerID)
	}

	// Replace the message through the response_url; the buttons are gone.
	if _, _, err := api.PostMessage(general, noUnfurl, slack.MsgOptionReplaceOriginal(cb.ResponseURL), slack.MsgOptionText("Approved by <@U0ALICE001>", false)); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(general, ts); m.Text != "Approved by <@U0ALICE001>" || len(m.ActionIDs()) != 0 {
		t.Errorf("replaced message = %+v", m)
	}
	if err := srv.Click(alice, general, ts, "perm_deny"); err == nil {
		t.Error("clicking a removed button succeeded")
	}

	// A question: static_select and checkboxes, then a submit button.
	_, qts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(parent), slack.MsgOptionText("Which runner?", false),
		slack.MsgOptionBlocks(
			slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "Which test runner?", false, false), nil,
				slack.NewAccessory(slack.NewOptionsSelectBlockElement("static_select", plain("Choose one"), "question_1",
					slack.NewOptionBlockObject("0", plain("go test"), nil), slack.NewOptionBlockObject("1", plain("gotestsum"), nil))),
				slack.SectionBlockOptionBlockID("q:1")),
			slack.NewActionBlock("q:2", slack.NewCheckboxGroupsBlockElement("question_2",
				slack.NewOptionBlockObject("race", plain("-race"), nil), slack.NewOptionBlockObject("cover", plain("-cover"), nil), slack.NewOptionBlockObject("v", plain("-v"), nil))),
			slack.NewActionBlock("q:submit", slack.NewButtonBlockElement("submit", "q", plain("Submit"))),
		))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Select(alice, general, qts, "question_1", "1"); err != nil {
		t.Fatal(err)
	}
	cb = s.next(nil).Data.(slack.InteractionCallback)
	if a := cb.ActionCallback.BlockActions[0]; a.Type != "static_select" || a.SelectedOption.Value != "1" || a.SelectedOption.Text.Text != "gotestsum" {
		t.Errorf("select action = %+v", a)
	}
	if st := cb.BlockActionState.Values["q:1"]["question_1"]; st.SelectedOption.Value != "1" {
		t.Errorf("state = %+v", cb.BlockActionState)
	}
	if err := srv.Check(alice, general, qts, "question_2", []string{"v", "race"}); err != nil {
		t.Fatal(err)
	}
	cb = s.next(nil).Data.(slack.InteractionCallback)
	if a := cb.ActionCallback.BlockActions[0]; a.Type != "checkboxes" || len(a.SelectedOptions) != 2 || a.SelectedOptions[0].Value != "race" {
		t.Errorf("checkboxes action = %+v", a)
	}
	if err := srv.Select(alice, general, qts, "question_1", "7"); err == nil {
		t.Error("selecting a missing option succeeded")
	}
	if err := srv.Click(alice, general, qts, "submit"); err != nil {
		t.Fatal(err)
	}
	cb = s.next(nil).Data.(slack.InteractionCallback)
	vals := cb.BlockActionState.Values
	if vals["q:1"]["question_1"].SelectedOption.Value != "1" || len(vals["q:2"]["question_2"].SelectedOptions) != 2 || cb.ActionCallback.BlockActions[0].ActionID != "submit" {
		t.Errorf("submit state = %+v", vals)
	}
	// Another user's state is their own.
	if err := srv.Click(bob, general, qts, "submit"); err != nil {
		t.Fatal(err)
	}
	if cb = s.next(nil).Data.(slack.InteractionCallback); len(cb.BlockActionState.Values) != 0 || cb.User.ID != bob {
		t.Errorf("bob's state = %+v", cb.BlockActionState.Values)
	}

	// An ephemeral message: container.is_ephemeral, no message.
	ets, err := api.PostEphemeral(general, alice, slack.MsgOptionText("only you", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("e", slack.NewButtonBlockElement("dismiss", "x", plain("Dismiss")))))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Click(alice, general, ets, "dismiss"); err != nil {
		t.Fatal(err)
	}
	cb = s.next(nil).Data.(slack.InteractionCallback)
	if !cb.Container.IsEphemeral || cb.Message.Timestamp != "" {
		t.Errorf("ephemeral click = %+v", cb)
	}
	if _, _, err := api.PostMessage(general, noUnfurl, slack.MsgOptionDeleteOriginal(cb.ResponseURL)); err != nil {
		t.Fatal(err)
	}
	if e := srv.Ephemerals(general, alice); len(e) != 0 {
		t.Errorf("ephemerals after delete_original = %+v", e)
	}
	if err := srv.Click(bob, general, ets, "dismiss"); err == nil {
		t.Error("bob clicked alice's ephemeral message")
	}
	noViolations(t, srv)
}

func TestInteractiveNotAckedIsAViolation(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{AckTimeout: 100 * time.Millisecond, NoBotEcho: true})
	api := newAPI(srv)
	s := runSocket(t, api, false)
	_, ts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionText("q", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("a", slack.NewButtonBlockElement("ok", "1", slack.NewTextBlockObject("plain_text", "OK", false, false)))))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Click(alice, general, ts, "ok"); err != nil {
		t.Fatal(err)
	}
	s.next(nil)
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Violations()) == 1 }) {
		t.Fatalf("violations = %v", srv.Violations())
	}
	s.none(300 * time.Millisecond) // interactive payloads are not redelivered
}

func TestSlashCommand(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	s := runSocket(t, newAPI(srv), false)
	if err := srv.Slash(alice, general, "/claude", "schedule daily 09:00 summarise open PRs"); err != nil {
		t.Fatal(err)
	}
	evt := s.next(nil)
	cmd, ok := evt.Data.(slack.SlashCommand)
	if !ok || evt.Type != socketmode.EventTypeSlashCommand || !evt.Request.AcceptsResponsePayload {
		t.Fatalf("event = %+v", evt)
	}
	if cmd.Command != "/claude" || cmd.Text != "schedule daily 09:00 summarise open PRs" || cmd.UserID != alice || cmd.UserName != "alice" ||
		cmd.ChannelID != general || cmd.ChannelName != "general" || cmd.TeamID != "T0FAKETEAM" || cmd.APIAppID != "A0FAKEAPP1" || cmd.IsEnterpriseInstall {
		t.Errorf("command = %+v", cmd)
	}
	if err := s.sm.Ack(*evt.Request, map[string]any{"response_type": "ephemeral", "text": "Scheduled: daily at 09:00"}); err != nil {
		t.Fatal(err)
	}
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Ephemerals(general, alice)) == 1 }) {
		t.Fatal("no ephemeral response")
	}
	if e := srv.Ephemerals(general, alice)[0]; e.Text != "Scheduled: daily at 09:00" || e.BotID != "B0FAKEBOT1" {
		t.Errorf("ephemeral = %+v", e)
	}
	// in_channel through the response_url.
	resp, err := http.Post(cmd.ResponseURL, "application/json", strings.NewReader(`{"response_type":"in_channel","text":"Done"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("response_url: %v %v", resp, err)
	}
	resp.Body.Close()
	if msgs := srv.Messages(general); len(msgs) != 1 || msgs[0].Text != "Done" {
		t.Errorf("messages = %+v", msgs)
	}
	noViolations(t, srv)
	// Over the limit of 5 uses.
	for i := 0; i < 5; i++ {
		resp, _ := http.Post(cmd.ResponseURL, "application/json", strings.NewReader(`{"text":"again"}`))
		resp.Body.Close()
	}
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "used 6 times") {
		t.Errorf("violations = %v", v)
	}
}

func TestSendHTTPSignatures(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{SigningSecret: "s3cret"})
	var mu sync.Mutex
	var got []string
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sv, err := slack.NewSecretsVerifier(r.Header, "s3cret")
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/events":
			ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			if ev.Type == slackevents.URLVerification {
				var c slackevents.ChallengeResponse
				_ = json.Unmarshal(body, &c)
				w.Header().Set("Content-Type", "text/plain")
				_, _ = w.Write([]byte(c.Challenge))
				return
			}
			got = append(got, "event "+ev.InnerEvent.Type+" retry="+r.Header.Get("X-Slack-Retry-Num"))
		case "/interactive":
			cb, err := slack.InteractionCallbackParse(r)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			got = append(got, "interactive "+cb.ActionCallback.BlockActions[0].ActionID)
		case "/commands":
			cmd, err := slack.SlashCommandParse(r)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			got = append(got, "command "+cmd.Command+" "+cmd.Text)
		}
	}))
	defer app.Close()

	event := []byte(`{"token":"t","team_id":"T0FAKETEAM","api_app_id":"A0FAKEAPP1","type":"event_callback","event_id":"Ev1","event_time":1,` +
		`"event":{"type":"app_mention","user":"U0ALICE001","text":"hi","ts":"1.000001","channel":"C0GENERAL1","event_ts":"1.000001"}}`)
	status := func(resp *http.Response, err error) int {
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event)); st != 200 {
		t.Errorf("good signature: %d", st)
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event, BadSignature())); st != 401 {
		t.Errorf("bad signature: %d", st)
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event, StaleTimestamp())); st != 401 {
		t.Errorf("stale timestamp: %d", st)
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event, NoSignature())); st != 401 {
		t.Errorf("no signature: %d", st)
	}
	if st := status(srv.SendHTTP(app.URL+"/events", "events_api", event, Retry(1, "http_timeout"))); st != 200 {
		t.Errorf("retry: %d", st)
	}
	interactive, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": alice},
		"actions": []any{map[string]any{"type": "button", "action_id": "perm_allow", "block_id": "b", "value": "v"}}})
	if st := status(srv.SendHTTP(app.URL+"/interactive", "interactive", interactive)); st != 200 {
		t.Errorf("interactive: %d", st)
	}
	slash := []byte(`{"command":"/claude","text":"status","user_id":"U0ALICE001","is_enterprise_install":"false"}`)
	if st := status(srv.SendHTTP(app.URL+"/commands", "slash_commands", slash)); st != 200 {
		t.Errorf("slash: %d", st)
	}
	if err := srv.VerifyURL(app.URL + "/events"); err != nil {
		t.Error(err)
	}
	mu.Lock()
	want := "event app_mention retry=|event app_mention retry=1|interactive perm_allow|command /claude status"
	if strings.Join(got, "|") != want {
		t.Errorf("app saw %q, want %q", strings.Join(got, "|"), want)
	}
	mu.Unlock()
}

func TestHTTPModeDelivery(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var attempts []string
	fail := 1
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sv, err := slack.NewSecretsVerifier(r.Header, "fakesigningsecret")
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			http.Error(w, err.Error(), 401)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/commands" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"response_type":"ephemeral","text":"ok!"}`))
			return
		}
		ev, _ := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
		cb := ev.Data.(*slackevents.EventsAPICallbackEvent)
		attempts = append(attempts, cb.EventID+" "+r.Header.Get("X-Slack-Retry-Num")+" "+r.Header.Get("X-Slack-Retry-Reason"))
		if fail > 0 {
			fail--
			w.WriteHeader(500)
		}
	}))
	defer app.Close()
	srv := Start(t, Options{EventsURL: app.URL + "/events", CommandsURL: app.URL + "/commands"})
	srv.DM(alice, "hello")
	if !srv.WaitFor(waitLong, func() bool { mu.Lock(); defer mu.Unlock(); return len(attempts) == 2 }) {
		t.Fatalf("attempts = %v", attempts)
	}
	mu.Lock()
	if a, b := strings.Fields(attempts[0]), strings.Fields(attempts[1]); a[0] != b[0] || len(a) != 1 || b[1] != "1" || b[2] != "http_error" {
		t.Errorf("attempts = %q", attempts)
	}
	mu.Unlock()
	if err := srv.Slash(alice, general, "/claude", "status"); err != nil {
		t.Fatal(err)
	}
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Ephemerals(general, alice)) == 1 }) {
		t.Fatal("no slash command response")
	}
	noViolations(t, srv)
}

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

func TestDeliverMalformed(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	s := runSocket(t, newAPI(srv), true)
	if !srv.WaitConnections(1, waitLong) {
		t.Fatal("no connection")
	}
	srv.Deliver("events_api", json.RawMessage(`{"type":"event_callback","event":{"type":"no_such_event"}}`))
	if evt := s.next(nil); evt.Type != socketmode.EventTypeErrorBadMessage {
		t.Errorf("event = %s", evt.Type)
	}
	// The socket survives.
	ts := srv.Post(alice, general, "still here")
	_, inner := callback(s.next(innerType("message")))
	if me := inner.Data.(*slackevents.MessageEvent); me.TimeStamp != ts {
		t.Errorf("event = %+v", me)
	}
}

func TestSocketmodeHandlerDispatch(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true})
	api := newAPI(srv)
	sm := socketmode.New(api)
	h := socketmode.NewSocketmodeHandler(sm)
	got := make(chan string, 10)
	h.HandleEvents(slackevents.AppMention, func(evt *socketmode.Event, c *socketmode.Client) {
		_ = c.Ack(*evt.Request)
		got <- "mention " + evt.Data.(slackevents.EventsAPIEvent).InnerEvent.Data.(*slackevents.AppMentionEvent).Text
	})
	h.HandleEvents(slackevents.Message, func(evt *socketmode.Event, c *socketmode.Client) { _ = c.Ack(*evt.Request) })
	h.HandleDefault(func(*socketmode.Event, *socketmode.Client) {}) // connecting, connected, hello
	h.HandleInteractionBlockAction("perm_allow", func(evt *socketmode.Event, c *socketmode.Client) {
		_ = c.Ack(*evt.Request)
		got <- "click " + evt.Data.(slack.InteractionCallback).ActionCallback.BlockActions[0].Value
	})
	h.HandleSlashCommand("/claude", func(evt *socketmode.Event, c *socketmode.Client) {
		_ = c.Ack(*evt.Request, map[string]any{"text": "ok"})
		got <- "slash " + evt.Data.(slack.SlashCommand).Text
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.RunEventLoopContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	ts := srv.Post(alice, general, "<@U0FAKEBOT1> hi")
	_, bts, err := api.PostMessage(general, noUnfurl, slack.MsgOptionTS(ts), slack.MsgOptionText("approve?", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("perm:1", slack.NewButtonBlockElement("perm_allow", "toolu_1", slack.NewTextBlockObject("plain_text", "Approve", false, false)))))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Click(alice, general, bts, "perm_allow"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Slash(alice, general, "/claude", "status"); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"mention <@U0FAKEBOT1> hi": true, "click toolu_1": true, "slash status": true}
	for len(want) > 0 {
		select {
		case g := <-got:
			if !want[g] {
				t.Errorf("unexpected %q", g)
			}
			delete(want, g)
		case <-time.After(waitLong):
			t.Fatalf("missing %v", want)
		}
	}
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Ephemerals(general, alice)) == 1 }) {
		t.Error("slash ack payload not shown")
	}
	if !srv.WaitFor(waitLong, func() bool {
		for _, e := range srv.Envelopes() {
			if !e.Acked {
				return false
			}
		}
		return true
	}) {
		t.Errorf("unacked envelopes: %+v", srv.Envelopes())
	}
	noViolations(t, srv)
}
