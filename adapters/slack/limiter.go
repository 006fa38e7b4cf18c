package slack

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Per-method budgets (SLACK.md §1): one budget per method per workspace,
// shared by every session of the bot; chat.postMessage is limited per
// channel. rate is calls per second, burst how many may go at once.
var methodLimits = map[string]struct{ rate, burst float64 }{
	"chat.postMessage":             {1, 3}, // per channel
	"chat.update":                  {50.0 / 60, 5},
	"chat.delete":                  {50.0 / 60, 5},
	"chat.postEphemeral":           {100.0 / 60, 10},
	"chat.startStream":             {20.0 / 60, 3},
	"chat.appendStream":            {100.0 / 60, 10},
	"chat.stopStream":              {20.0 / 60, 3},
	"assistant.threads.setStatus":  {50.0 / 60, 5},
	"reactions.add":                {50.0 / 60, 5},
	"files.getUploadURLExternal":   {100.0 / 60, 10},
	"files.completeUploadExternal": {100.0 / 60, 10},
	"auth.test":                    {50.0 / 60, 5},
	// Catch-up's reads (Tier 3).
	"conversations.replies": {50.0 / 60, 5},
	"conversations.history": {50.0 / 60, 5},
}

// limiter paces calls per method (and per channel for chat.postMessage)
// and honours Retry-After: after a 429 no call of that method goes out
// before the time Slack named.
type limiter struct {
	mu      sync.Mutex
	now     func() time.Time
	scale   float64
	buckets map[string]*bucket
	blocked map[string]time.Time
	// turns lets one call per budget be in flight: a call sent while
	// another awaits its answer could not honour the 429 that answer may
	// carry. A budget's entry lives while a call holds or awaits it.
	turns map[string]*turn
	// swept is when buckets were last swept (see sweepLocked).
	swept time.Time
}

type turn struct {
	ch    chan struct{}
	users int // calls holding or awaiting the turn
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(scale float64, now func() time.Time) *limiter {
	if scale <= 0 {
		scale = 1
	}
	return &limiter{now: now, scale: scale, buckets: map[string]*bucket{}, blocked: map[string]time.Time{}, turns: map[string]*turn{}}
}

func bucketKey(method, channel string) string {
	if method == "chat.postMessage" {
		return method + "/" + channel
	}
	return method
}

// bucketLocked is the budget of method (and channel) refilled up to now,
// with its refill rate per second. Called with l.mu held.
func (l *limiter) bucketLocked(method, channel string, now time.Time) (*bucket, float64) {
	lim, ok := methodLimits[method]
	if !ok {
		lim.rate, lim.burst = 50.0/60, 5
	}
	rate := lim.rate * l.scale
	key := bucketKey(method, channel)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: lim.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = min(lim.burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	return b, rate
}

// wait blocks until a call of method may be made, or ctx ends. It
// returns how long it slept for the budget or a Retry-After.
func (l *limiter) wait(ctx context.Context, method, channel string) (time.Duration, error) {
	var waited time.Duration
	for {
		l.mu.Lock()
		now := l.now()
		var d time.Duration
		if until, ok := l.blocked[method]; ok && now.Before(until) {
			d = until.Sub(now)
		} else {
			b, rate := l.bucketLocked(method, channel, now)
			if b.tokens >= 1 {
				b.tokens--
				l.sweepLocked(now)
				l.mu.Unlock()
				return waited, nil
			}
			d = time.Duration((1 - b.tokens) / rate * float64(time.Second))
		}
		l.mu.Unlock()
		t := time.NewTimer(d)
		slept := time.Now() // the real time slept: l.now may be a test's clock
		select {
		case <-ctx.Done():
			t.Stop()
			return waited + time.Since(slept), ctx.Err()
		case <-t.C:
		}
		waited += time.Since(slept)
	}
}

// turn waits until no other call of the budget of method (and channel)
// is in flight, or ctx ends; release ends the turn.
func (l *limiter) turn(ctx context.Context, method, channel string) (release func(), err error) {
	key := bucketKey(method, channel)
	l.mu.Lock()
	t := l.turns[key]
	if t == nil {
		t = &turn{ch: make(chan struct{}, 1)}
		l.turns[key] = t
	}
	t.users++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		if t.users--; t.users == 0 {
			delete(l.turns, key)
		}
		l.mu.Unlock()
	}
	select {
	case t.ch <- struct{}{}:
		return func() { <-t.ch; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}

// sweepLocked forgets the buckets that have refilled (a full bucket is
// what a new one is) and the Retry-Afters that have passed, so that a
// bucket per channel does not outlive its use. At most once a minute.
func (l *limiter) sweepLocked(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for key, b := range l.buckets {
		method, _, _ := strings.Cut(key, "/")
		lim, ok := methodLimits[method]
		if !ok {
			lim.rate, lim.burst = 50.0/60, 5
		}
		if b.tokens+now.Sub(b.last).Seconds()*lim.rate*l.scale >= lim.burst {
			delete(l.buckets, key)
		}
	}
	for method, until := range l.blocked {
		if !now.Before(until) {
			delete(l.blocked, method)
		}
	}
}

// sizes are how many budgets the limiter holds state for (tests).
func (l *limiter) sizes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets) + len(l.turns) + len(l.blocked)
}

// penalize records a 429: nothing of method goes out before retryAfter.
func (l *limiter) penalize(method string, retryAfter time.Duration) {
	if retryAfter <= 0 {
		retryAfter = time.Second
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	until := l.now().Add(retryAfter)
	if until.After(l.blocked[method]) {
		l.blocked[method] = until
	}
}

// call runs one Web API call under the limiter, waiting out 429s and
// trying again: nothing is dropped, and no call of a method is made inside
// a Retry-After Slack gave for it, nor while another call of its budget
// awaits an answer that may be a 429.
func (a *Adapter) call(ctx context.Context, method, channel string, f func(context.Context) error) error {
	release, err := a.lim.turn(ctx, method, channel)
	if err != nil {
		return err
	}
	defer release()
	for {
		waited, err := a.lim.wait(ctx, method, channel)
		a.waited(method, waited)
		if err != nil {
			return err
		}
		err = f(ctx)
		a.called(method, err)
		var rl *slack.RateLimitedError
		if errors.As(err, &rl) {
			a.log.Debug("slack: rate limited", "method", method, "retry_after", rl.RetryAfter)
			a.lim.penalize(method, rl.RetryAfter)
			continue
		}
		return err
	}
}

// take takes a token of method's budget if one is there within the next
// within, without queueing behind it: it reports how long to wait for the
// token taken, or false when the budget is spent for longer (or a
// Retry-After holds it).
func (l *limiter) take(method, channel string, within time.Duration) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if until, ok := l.blocked[method]; ok && now.Before(until) {
		return 0, false
	}
	b, rate := l.bucketLocked(method, channel, now)
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	wait := time.Duration((1 - b.tokens) / rate * float64(time.Second))
	if wait > within {
		return 0, false
	}
	b.tokens-- // reserved: owed back by the refill within wait
	return wait, true
}

// budgetWait is how long tryCall waits for a token due soon: a budget
// that refills faster than this is not spent (Slack's Tier 2 refills one
// every 3 s).
const budgetWait = 250 * time.Millisecond

// errNoBudget: a call tried only if its budget allowed it at once was not
// made (see tryCall).
var errNoBudget = errors.New("slack: no budget left for this call now")

// tryCall makes one Web API call only if its budget allows it now: it
// does not wait for a token or a Retry-After (a 429 is recorded, not
// waited out). It returns errNoBudget when the call was not made or
// was refused for the rate: the caller goes another way.
func (a *Adapter) tryCall(ctx context.Context, method, channel string, f func(context.Context) error) error {
	// Another call of the budget in flight is waited for (a round trip):
	// what is not waited for is the budget itself.
	release, err := a.lim.turn(ctx, method, channel)
	if err != nil {
		return err
	}
	defer release()
	wait, ok := a.lim.take(method, channel, budgetWait)
	if !ok {
		return errNoBudget
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		a.waited(method, wait)
	}
	err = f(ctx)
	a.called(method, err)
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		a.lim.penalize(method, rl.RetryAfter)
		return errNoBudget
	}
	return err
}
