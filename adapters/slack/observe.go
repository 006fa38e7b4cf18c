package slack

import (
	"errors"
	"time"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
)

// SetAPIObserver makes o told of every Web API call the adapter makes
// (each attempt: a call retried after a 429 counts again) and of the time
// calls waited for their method's budget or a Retry-After (limiter.go).
// Call it before Run.
func (a *Adapter) SetAPIObserver(o adapters.APIObserver) { a.obs = o }

// called tells the observer how one call of method ended.
func (a *Adapter) called(method string, err error) {
	if a.obs == nil {
		return
	}
	result := adapters.APIOK
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &rl):
		result = adapters.APIRateLimited
	case err != nil:
		result = adapters.APIError
	}
	a.obs.APICall(Platform, method, result)
}

// waited tells the observer a call of method was held back d.
func (a *Adapter) waited(method string, d time.Duration) {
	if a.obs != nil && d > 0 {
		a.obs.RateLimitWait(Platform, method, d)
	}
}
