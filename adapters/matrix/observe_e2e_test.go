package matrix_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// apiCounter counts what the adapter tells its APIObserver.
type apiCounter struct {
	mu    sync.Mutex
	calls map[string]int // "platform method result"
	wait  map[string]time.Duration
}

func (c *apiCounter) APICall(platform, method, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[platform+" "+method+" "+result]++
}

func (c *apiCounter) RateLimitWait(platform, method string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wait[platform+" "+method] += d
}

func (c *apiCounter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[k]
}

// limitFirstSend answers the first message send with what Synapse sends
// when a client goes too fast: 429, M_LIMIT_EXCEEDED, Retry-After.
type limitFirstSend struct {
	next http.RoundTripper
	done atomic.Bool
}

func (l *limitFirstSend) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/send/m.room.message/") && l.done.CompareAndSwap(false, true) {
		h := http.Header{}
		h.Set("Retry-After", "1")
		h.Set("Content-Type", "application/json")
		return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Header: h, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"errcode":"M_LIMIT_EXCEEDED","error":"Too Many Requests","retry_after_ms":1000}`))}, nil
	}
	return l.next.RoundTrip(r)
}

// TestAPIObserverOnDendrite: on a real homeserver, the sync loop and the
// posts are told by endpoint, never by an id, and a post refused with 429
// is told as such, with the wait until mautrix sent it again.
func TestAPIObserverOnDendrite(t *testing.T) {
	obs := &apiCounter{calls: map[string]int{}, wait: map[string]time.Duration{}}
	s := newSolo(t, soloOptions{
		observer:  obs,
		transport: func(next http.RoundTripper) http.RoundTripper { return &limitFirstSend{next: next} },
	})
	room := s.room(s.alice, false)
	th := s.thread(room)
	s.until(func(ev adapters.Event) bool { return ev.Message != nil })
	if _, err := s.ad.Direct().Post(t.Context(), th, adapters.Message{Kind: adapters.KindNotice, Text: "after a 429"}); err != nil {
		t.Fatal(err)
	}
	if n := obs.get("matrix rooms.send rate_limited"); n != 1 {
		t.Errorf("429s told: %d, want 1", n)
	}
	if n := obs.get("matrix rooms.send ok"); n < 1 {
		t.Errorf("sends told: %d", n)
	}
	if n := obs.get("matrix sync ok"); n < 1 {
		t.Errorf("syncs told: %d", n)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if w := obs.wait["matrix rooms.send"]; w < 900*time.Millisecond {
		t.Errorf("wait told %v, want at least the Retry-After of 1 s", w)
	}
	for k := range obs.calls {
		if strings.ContainsAny(k, "!@$#:") {
			t.Errorf("an id reached the observer: %q", k)
		}
	}
	t.Logf("told: %v", obs.calls)
}
