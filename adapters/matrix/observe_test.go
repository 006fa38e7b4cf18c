package matrix

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// recordingObserver keeps what an adapter tells its APIObserver.
type recordingObserver struct {
	mu    sync.Mutex
	calls []string // "platform method result"
	waits map[string]time.Duration
}

func (r *recordingObserver) APICall(platform, method, result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, platform+" "+method+" "+result)
}

func (r *recordingObserver) RateLimitWait(platform, method string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waits == nil {
		r.waits = map[string]time.Duration{}
	}
	r.waits[platform+" "+method] += d
}

func (r *recordingObserver) snapshot() ([]string, map[string]time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := map[string]time.Duration{}
	for k, v := range r.waits {
		w[k] = v
	}
	return slices.Clone(r.calls), w
}

// TestAPIObserverSeesRateLimit: a homeserver answers the first send with
// 429 and Retry-After: 1; mautrix waits and sends again. The observer is
// told of both attempts, the 429 among them, and of a wait no shorter
// than the one the server asked for.
func TestAPIObserverSeesRateLimit(t *testing.T) {
	var mu sync.Mutex
	limited := 1
	hs := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/send/") {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if limited > 0 {
			limited--
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"errcode":"M_LIMIT_EXCEEDED","error":"slow down","retry_after_ms":1000}`)
			return
		}
		io.WriteString(w, `{"event_id":"$sent"}`)
	})
	a := connectedAdapter(t, hs, 50*time.Millisecond)
	obs := &recordingObserver{}
	a.SetAPIObserver(obs)
	thread := adapters.ThreadRef{Platform: Platform, Channel: "!room:example.org", Thread: "$root"}
	if _, err := a.Direct().Post(t.Context(), thread, adapters.Message{Kind: adapters.KindNotice, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	calls, waits := obs.snapshot()
	want := []string{"matrix rooms.send rate_limited", "matrix rooms.send ok"}
	var sends []string
	for _, c := range calls {
		if strings.HasPrefix(c, "matrix rooms.send ") {
			sends = append(sends, c)
		}
	}
	if !slices.Equal(sends, want) {
		t.Errorf("sends observed %q, want %q (all: %q)", sends, want, calls)
	}
	for _, c := range calls {
		if strings.Contains(c, "!room") || strings.Contains(c, "$root") {
			t.Errorf("an id reached the observer: %q", c)
		}
	}
	// mautrix sleeps the Retry-After (1 s) between the two attempts.
	if w := waits["matrix rooms.send"]; w < 900*time.Millisecond {
		t.Errorf("rate-limit wait %v, want at least the 1 s the server asked", w)
	}
	tr := a.cli.Client.Transport.(*observedTransport)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.limited) != 0 {
		t.Errorf("%d requests still remembered as rate-limited after their retry", len(tr.limited))
	}
}

func TestEndpointNames(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/_matrix/client/v3/sync", "sync"},
		{"/_matrix/client/v3/rooms/!abc:example.org/send/m.room.message/mautrix-go_1", "rooms.send"},
		{"/_matrix/client/v3/rooms/!abc:example.org/redact/$ev/txn", "rooms.redact"},
		{"/_matrix/client/v1/rooms/!abc:example.org/relations/$ev/m.annotation/m.reaction", "rooms.relations"},
		{"/_matrix/client/v3/rooms/!abc:example.org/typing/@bot:example.org", "rooms.typing"},
		{"/_matrix/client/v3/join/!abc:example.org", "join"},
		{"/_matrix/client/v3/account/whoami", "account"},
		{"/_matrix/client/v3/profile/@bot:example.org/displayname", "profile"},
		{"/_matrix/client/v3/keys/upload", "keys.upload"},
		{"/_matrix/client/v3/sendToDevice/m.room.encrypted/txn1", "sendToDevice"},
		{"/_matrix/media/v3/upload", "media.upload"},
		{"/_matrix/client/v1/media/download/example.org/AbCd", "media.download"},
		{"/_matrix/client/v3/user/@bot:example.org/filter", "user"},
		{"/_matrix/client/v3/rooms/!abc:example.org", "rooms"},
		{"/_matrix/client/v3/!abc:example.org", "other"},
		{"/somewhere/else", "other"},
		{"/", "other"},
	}
	for _, tt := range tests {
		if got := endpoint(tt.path); got != tt.want {
			t.Errorf("endpoint(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
