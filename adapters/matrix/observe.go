package matrix

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// SetAPIObserver makes o told of every request the adapter's client makes
// to the homeserver, and of the time between a 429 and the retry of that
// request (mautrix waits as the server asks, then sends it again: each
// attempt is a request). Call it before Connect.
func (a *Adapter) SetAPIObserver(o adapters.APIObserver) {
	if o == nil {
		o = adapters.NopAPIObserver{}
	}
	hc := *a.cli.Client // a copy: the client the caller configured is not changed
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &observedTransport{base: base, obs: o, limited: make(map[*url.URL]time.Time)}
	a.cli.Client = &hc
}

// observedTransport tells an APIObserver of each request it carries.
type observedTransport struct {
	base http.RoundTripper
	obs  adapters.APIObserver

	mu sync.Mutex
	// limited: the requests answered 429 and not sent again yet, by their
	// URL. mautrix sends a retry as the same request (the http.Client's
	// per-attempt copy shares its URL), so the URL names it across
	// attempts and no two requests share one.
	limited map[*url.URL]time.Time
}

// Bounds of limited: a request mautrix gave up on after its 429 (retries
// spent, context ended) is not sent again; its entry goes after
// limitedTTL, beyond mautrix's longest backoff (10 min), and no more
// than limitedCap are kept.
const (
	limitedTTL = 15 * time.Minute
	limitedCap = 1024
)

func (t *observedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := endpoint(req.URL.Path)
	t.mu.Lock()
	at, retry := t.limited[req.URL]
	delete(t.limited, req.URL)
	t.mu.Unlock()
	if retry {
		t.obs.RateLimitWait(Platform, method, time.Since(at))
	}
	resp, err := t.base.RoundTrip(req)
	result := adapters.APIOK
	switch {
	case err != nil:
		result = adapters.APIError
	case resp.StatusCode == http.StatusTooManyRequests:
		result = adapters.APIRateLimited
		t.limit(req.URL)
	case resp.StatusCode >= 400:
		result = adapters.APIError
	}
	t.obs.APICall(Platform, method, result)
	return resp, err
}

// limit notes that the request at u was answered 429 now.
func (t *observedTransport) limit(u *url.URL) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, at := range t.limited {
		if now.Sub(at) > limitedTTL {
			delete(t.limited, k)
		}
	}
	if len(t.limited) < limitedCap {
		t.limited[u] = now
	}
}

// endpoint names the Client-Server API endpoint of path without any id
// in it: "sync", "rooms.send", "keys.upload", "media.download"; "other"
// for a path it cannot read.
func endpoint(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	// _matrix / api (client, media) / version / endpoint ...
	if len(segs) < 4 || segs[0] != "_matrix" {
		return "other"
	}
	api, rest := segs[1], segs[3:]
	name := rest[0]
	switch {
	case api == "media" && isName(name):
		return "media." + name
	case name == "rooms" && len(rest) >= 3 && isName(rest[2]):
		// rooms/{roomId}/{action}/...
		return "rooms." + rest[2]
	case (name == "keys" || name == "room_keys" || name == "media") && len(rest) >= 2 && isName(rest[1]):
		return name + "." + rest[1]
	case isName(name):
		return name
	}
	return "other"
}

// isName: s is an endpoint's own word, not an id (ids hold a sigil or a
// server name: !room:server, @user:server, #alias:server).
func isName(s string) bool {
	return s != "" && len(s) <= 64 && !strings.ContainsAny(s, "!@#$:+%")
}
