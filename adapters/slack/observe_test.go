package slack_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// apiRecorder keeps what the adapter tells its APIObserver.
type apiRecorder struct {
	mu    sync.Mutex
	calls map[string]int // "method result"
	waits map[string]time.Duration
}

func (r *apiRecorder) APICall(platform, method, result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if platform != slack.Platform {
		panic("platform " + platform)
	}
	r.calls[method+" "+result]++
}

func (r *apiRecorder) RateLimitWait(platform, method string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits[method] += d
}

func (r *apiRecorder) get(call string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[call]
}

func (r *apiRecorder) wait(method string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waits[method]
}

// TestAPIObserverCountsCallsAnd429s: the fake Slack answers a post with
// HTTP 429 and Retry-After: 1. The observer is told of the refused
// attempt and of the one that went through after it, and of a wait no
// shorter than the Retry-After (the fake records a violation for a call
// made inside it, so the wait is the adapter's own, not luck).
func TestAPIObserverCountsCallsAnd429s(t *testing.T) {
	fs := fakeslack.Start(t, fakeslack.Options{})
	ad, err := slack.New(slack.Config{BotToken: fs.Opts.BotToken, AppToken: fs.Opts.AppToken, APIURL: fs.URL + "/api/", EditInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := &apiRecorder{calls: map[string]int{}, waits: map[string]time.Duration{}}
	ad.SetAPIObserver(rec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ad.Run(ctx, func(context.Context, adapters.Event) error { return nil })
	}()
	t.Cleanup(func() { cancel(); <-done; ad.Close() })
	if !fs.WaitConnections(1, wait) {
		t.Fatal("the adapter did not connect")
	}
	if got := rec.get("auth.test ok"); got != 1 {
		t.Errorf("auth.test ok observed %d times, want 1", got)
	}

	th := adapters.ThreadRef{Platform: slack.Platform, Channel: general, Thread: fs.Post(alice, general, "a thread")}
	fs.Fail("chat.postMessage", fakeslack.Fault{RetryAfter: 1})
	if _, err := ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindNotice, Text: "after a 429"}); err != nil {
		t.Fatal(err)
	}
	if got := rec.get("chat.postMessage rate_limited"); got != 1 {
		t.Errorf("429s observed: %d, want 1", got)
	}
	if got := rec.get("chat.postMessage ok"); got != 1 {
		t.Errorf("posts observed: %d, want 1", got)
	}
	if w := rec.wait("chat.postMessage"); w < 900*time.Millisecond {
		t.Errorf("rate-limit wait %v, want at least the Retry-After of 1 s", w)
	}
	fs.FailNext("chat.postMessage", "channel_not_found")
	if _, err := ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindNotice, Text: "refused"}); err == nil {
		t.Fatal("a refused post succeeded")
	}
	if got := rec.get("chat.postMessage error"); got != 1 {
		t.Errorf("errors observed: %d, want 1", got)
	}
	if v := fs.Violations(); len(v) > 0 {
		t.Errorf("Slack violations: %q", v)
	}
	// Each observed post is a call the fake saw: no more, no fewer.
	var statuses []int
	for _, c := range fs.Calls("chat.postMessage") {
		statuses = append(statuses, c.Status)
	}
	if !slices.Equal(statuses, []int{429, 200, 200}) {
		t.Errorf("the fake saw posts answered %v", statuses)
	}
}
