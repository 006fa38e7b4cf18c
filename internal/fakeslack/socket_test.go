package fakeslack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

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
