package fakeslack

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

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
