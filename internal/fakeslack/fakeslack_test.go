package fakeslack

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// The fake's tests are split by the area they exercise (messages_test.go,
// socket_test.go, interact_test.go, validation_test.go, ...); this file
// holds what they share.

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
