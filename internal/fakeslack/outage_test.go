package fakeslack

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// Events that found no socket: held, then given up (GiveUp, or GiveUpAfter
// when a socket connects late), their messages still readable; SetOffline
// keeps sockets out; Redeliver sends an event again as Slack's retry.
func TestEventsGivenUpWhileAway(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		opts   Options
		giveUp func(srv *Server)
	}{
		{"GiveUp", Options{}, func(srv *Server) {
			if n := srv.GiveUp(); n != 3 { // message, app_mention, message
				t.Errorf("GiveUp dropped %d events, want 3", n)
			}
		}},
		{"GiveUpAfter", Options{GiveUpAfter: 50 * time.Millisecond}, func(*Server) { time.Sleep(200 * time.Millisecond) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := Start(t, c.opts)
			missed := srv.Post(alice, general, "<@U0FAKEBOT1> while you were away")
			reply := srv.Reply(bob, general, missed, "me too")
			c.giveUp(srv)
			s := runSocket(t, newAPI(srv), true)
			if !srv.WaitConnections(1, waitLong) {
				t.Fatal("no connection")
			}
			after := srv.Post(alice, general, "now")
			if _, inner := callback(s.next(nil)); inner.Data.(*slackevents.MessageEvent).TimeStamp != after {
				t.Fatalf("first event delivered: %+v (the given-up ones must not be)", inner.Data)
			}
			for _, e := range srv.Envelopes() {
				if e.GivenUp != (e.Conn == 0) {
					t.Errorf("envelope %s: given up %v, delivered on socket %d", e.EventType, e.GivenUp, e.Conn)
				}
			}
			// The messages are still there to read back.
			h, err := newAPI(srv).GetConversationHistoryContext(context.Background(), &slack.GetConversationHistoryParameters{ChannelID: general})
			if err != nil || len(h.Messages) != 2 || h.Messages[1].Timestamp != missed || h.Messages[1].ReplyCount != 1 {
				t.Fatalf("history = %+v, %v", h, err)
			}
			if ids := srv.EventsOf(general, reply); len(ids) != 1 {
				t.Fatalf("events of the reply: %v", ids)
			}
			// Slack's retry of one, later: same event_id, the next attempt.
			id := srv.EventsOf(general, missed)[0]
			if err := srv.Redeliver(id); err != nil {
				t.Fatal(err)
			}
			evt := s.next(nil)
			if cb, _ := callback(evt); cb.EventID != id || evt.Request.RetryAttempt != 1 || evt.Request.RetryReason != "timeout" {
				t.Errorf("redelivered: event %s attempt %d reason %q", cb.EventID, evt.Request.RetryAttempt, evt.Request.RetryReason)
			}
			if err := srv.Redeliver("Ev0NOSUCH"); err == nil {
				t.Error("Redeliver of an unknown event: no error")
			}
			noViolations(t, srv)
		})
	}
}

func TestSetOfflineRefusesSockets(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	s := runSocket(t, newAPI(srv), true)
	if !srv.WaitConnections(1, waitLong) {
		t.Fatal("no connection")
	}
	srv.SetOffline(true)
	if !srv.WaitConnections(0, waitLong) {
		t.Fatal("socket not dropped")
	}
	ts := srv.Post(alice, general, "during the outage")
	// slack-go keeps trying: apps.connections.open works, the upgrade
	// does not.
	if !srv.WaitFor(waitLong, func() bool { return len(srv.Calls("apps.connections.open")) >= 3 }) {
		t.Fatalf("apps.connections.open called %d times", len(srv.Calls("apps.connections.open")))
	}
	if srv.Connections() != 0 || s.connected.Load() != 1 {
		t.Fatalf("connected while offline: %d open, %d connects", srv.Connections(), s.connected.Load())
	}
	srv.SetOffline(false)
	// Within GiveUpAfter: the event waited, and arrives.
	_, inner := callback(s.next(nil))
	if me := inner.Data.(*slackevents.MessageEvent); me.TimeStamp != ts {
		t.Errorf("event after the outage = %+v", me)
	}
	noViolations(t, srv)
}

// Another app's post: bot_id and its bot user, no subtype; an app_mention
// too when it mentions our bot.
func TestBotPost(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{})
	s := runSocket(t, newAPI(srv), true)
	other := OtherBot{BotID: "B0OTHER001", UserID: "U0OTHERBOT", AppID: "A0OTHER001", Name: "otherbot"}
	ts := srv.BotPost(other, general, "", "<@U0FAKEBOT1> from a bot")
	var types []string
	for range 2 {
		_, inner := callback(s.next(nil))
		types = append(types, inner.Type)
		switch e := inner.Data.(type) {
		case *slackevents.MessageEvent:
			if e.BotID != other.BotID || e.User != other.UserID || e.SubType != "" || e.TimeStamp != ts {
				t.Errorf("message event = %+v", e)
			}
		case *slackevents.AppMentionEvent:
			if e.BotID != other.BotID || e.User != other.UserID {
				t.Errorf("app_mention = %+v", e)
			}
		}
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"app_mention", "message"}) {
		t.Errorf("events = %v", types)
	}
	noViolations(t, srv)
}
