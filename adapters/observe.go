package adapters

import "time"

// APIObserver is told of the requests an adapter makes to its platform's
// API, for metrics (cmd/claudeops wires in package metrics). The Slack and
// Matrix adapters call it around each request; the console makes none.
// Calls come from any goroutine and must return at once. Every string is
// from a small fixed set: platform is the adapter's Name, method the API
// method (Slack's "chat.postMessage", a Matrix endpoint such as
// "rooms.send"), never an id of a channel, room, user or message.
type APIObserver interface {
	// APICall: one request of method ended with result (APIOK, APIError or
	// APIRateLimited: the platform answered HTTP 429). Each attempt is a
	// request: one retried after a 429 counts again.
	APICall(platform, method, result string)
	// RateLimitWait: a request of method was held back d by a rate limit
	// before it went out: a Retry-After the platform named, or the
	// adapter's own pacing under the platform's published limits.
	RateLimitWait(platform, method string, d time.Duration)
}

// Results of an API request, as APIObserver.APICall is told them.
const (
	APIOK          = "ok"
	APIError       = "error"
	APIRateLimited = "rate_limited"
)

// NopAPIObserver observes nothing: an adapter's default.
type NopAPIObserver struct{}

func (NopAPIObserver) APICall(platform, method, result string)                {}
func (NopAPIObserver) RateLimitWait(platform, method string, d time.Duration) {}
