package slack_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// solo is the Slack adapter alone on the fake Slack, without the bot: what
// it delivers is recorded, what it posts is read from the fake.
type solo struct {
	t  testing.TB
	fs *fakeslack.Server
	ad *slack.Adapter

	mu     sync.Mutex
	events []adapters.Event
}

func newSolo(t *testing.T) *solo { return newSoloWith(t, fakeslack.Options{}, nil) }

// newSoloWith is newSolo on a fake with options fo; mod adjusts the
// adapter's configuration.
func newSoloWith(t testing.TB, fo fakeslack.Options, mod func(*slack.Config)) *solo {
	t.Helper()
	s := &solo{t: t, fs: fakeslack.Start(t, fo)}
	cfg := slack.Config{BotToken: s.fs.Opts.BotToken, AppToken: s.fs.Opts.AppToken, APIURL: s.fs.URL + "/api/", EditInterval: 50 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	ad, err := slack.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.ad = ad
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ad.Run(ctx, func(ctx context.Context, ev adapters.Event) error {
			if ev.Message != nil && ev.Message.OpenThread != nil {
				// As the bot does for a sender it accepts.
				ref, err := ev.Message.OpenThread(ctx)
				if err != nil {
					return err
				}
				ev.Thread = ref
			}
			s.mu.Lock()
			s.events = append(s.events, ev)
			s.mu.Unlock()
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done; ad.Close() })
	if cfg.AppToken != "" && !s.fs.WaitConnections(1, wait) {
		t.Fatal("the adapter did not connect")
	}
	return s
}

// thread: alice's top-level message in general, as a thread.
func (s *solo) thread() adapters.ThreadRef {
	return adapters.ThreadRef{Platform: slack.Platform, Channel: general, Thread: s.fs.Post(alice, general, "a thread")}
}

// nextAction waits for the next click delivered, and fails on any other
// event kind in between.
func (s *solo) nextAction() adapters.Event {
	s.t.Helper()
	var ev adapters.Event
	if !s.fs.WaitFor(wait, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.events) == 0 {
			return false
		}
		ev, s.events = s.events[0], s.events[1:]
		return true
	}) {
		s.t.Fatal("no event delivered")
	}
	if ev.Click == nil {
		s.t.Fatalf("delivered %+v, want a click", ev)
	}
	return ev
}

// botMessages are the bot's messages in the thread, in order.
func (s *solo) botMessages(th adapters.ThreadRef) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range s.fs.Thread(th.Channel, th.Thread) {
		if m.BotID != "" {
			out = append(out, m)
		}
	}
	return out
}

// waitMessage waits until message ts holds want in its visible text.
func (s *solo) waitMessage(channel, ts, want string) fakeslack.Message {
	s.t.Helper()
	var m fakeslack.Message
	if !s.fs.WaitFor(wait, func() bool {
		m, _ = s.fs.Message(channel, ts)
		return strings.Contains(m.VisibleText(), want)
	}) {
		s.t.Fatalf("message %s never showed %q:\n%s", ts, want, m.VisibleText())
	}
	return m
}

func (s *solo) noViolations() {
	s.t.Helper()
	for _, v := range s.fs.Violations() {
		s.t.Errorf("Slack violation: %s", v)
	}
}

func choices(ids ...adapters.ChoiceID) []adapters.Choice {
	var out []adapters.Choice
	for _, c := range adapters.ApprovalChoices {
		for _, id := range ids {
			if c.ID == id {
				out = append(out, c)
			}
		}
	}
	return out
}
