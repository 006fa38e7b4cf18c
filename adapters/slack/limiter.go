package slack

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"golang.org/x/time/rate"
)

// Per-method budgets (Slack's "Rate limits" page: Tier 2 20/min, Tier 3
// 50/min, Tier 4 100/min, chat.postMessage about 1/s per channel): one
// budget per method per workspace, shared by every session of the bot;
// chat.postMessage is limited per channel. rate is calls per second,
// burst how many may go at once.
var methodLimits = map[string]methodLimit{
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

type methodLimit struct {
	rate  float64
	burst int
}

// tier3 is the budget of a method not listed: Slack's Tier 3.
var tier3 = methodLimit{50.0 / 60, 5}

// limiter paces calls per method (and per channel for chat.postMessage)
// and honours Retry-After: after a 429 no call of that method goes out
// before the time Slack named. Each budget is a token bucket of
// golang.org/x/time/rate, always asked at l.now (a test's clock may be
// given); what rate does not do, a Retry-After per method, one call in
// flight per budget, forgetting idle budgets, is here. Measured against
// the arithmetic it replaced (BenchmarkLimiter): about 25 ns more per
// call, rate's own lock, against a Web API call of milliseconds that
// each budget allows a few times a second at most.
type limiter struct {
	mu      sync.Mutex
	now     func() time.Time
	scale   float64
	buckets map[budgetKey]*rate.Limiter
	blocked map[string]time.Time
	// turns lets one call per budget be in flight: a call sent while
	// another awaits its answer could not honour the 429 that answer may
	// carry. A budget's entry lives while a call holds or awaits it.
	turns map[budgetKey]*turn
	// swept is when buckets were last swept (see sweepLocked).
	swept time.Time
}

type turn struct {
	ch    chan struct{}
	users int // calls holding or awaiting the turn
}

func newLimiter(scale float64, now func() time.Time) *limiter {
	if scale <= 0 {
		scale = 1
	}
	return &limiter{now: now, scale: scale, buckets: map[budgetKey]*rate.Limiter{}, blocked: map[string]time.Time{}, turns: map[budgetKey]*turn{}}
}

// budgetKey names a budget: a method's, or chat.postMessage's in one
// channel (a struct: no key is built per call).
type budgetKey struct{ method, channel string }

func bucketKey(method, channel string) budgetKey {
	if method != "chat.postMessage" {
		channel = ""
	}
	return budgetKey{method, channel}
}

// blockedLocked is how long a Retry-After still holds method (0: none).
// Called with l.mu held.
func (l *limiter) blockedLocked(method string, now time.Time) time.Duration {
	if len(l.blocked) == 0 { // as nearly always: no string hashed
		return 0
	}
	if until, ok := l.blocked[method]; ok && now.Before(until) {
		return until.Sub(now)
	}
	return 0
}

// bucketLocked is the budget of method (and channel), made full on first
// use. Called with l.mu held.
func (l *limiter) bucketLocked(method, channel string) *rate.Limiter {
	key := bucketKey(method, channel)
	b := l.buckets[key]
	if b == nil {
		lim, ok := methodLimits[method]
		if !ok {
			lim = tier3
		}
		b = rate.NewLimiter(rate.Limit(lim.rate*l.scale), lim.burst)
		l.buckets[key] = b
	}
	return b
}

// wait blocks until a call of method may be made, or ctx ends. It
// returns how long it slept for the budget or a Retry-After. The token is
// reserved before the sleep for it; a Retry-After that comes meanwhile
// (another channel's chat.postMessage) is waited out with the token
// kept, and a wait given up gives it back.
func (l *limiter) wait(ctx context.Context, method, channel string) (time.Duration, error) {
	var (
		waited time.Duration
		token  *rate.Reservation
	)
	for {
		l.mu.Lock()
		now := l.now()
		d := l.blockedLocked(method, now)
		if d == 0 && token == nil {
			if b := l.bucketLocked(method, channel); !b.AllowN(now, 1) {
				token = b.ReserveN(now, 1) // allocates: only when the budget is spent
				d = token.DelayFrom(now)
			}
		}
		if d == 0 {
			l.sweepLocked(now)
			l.mu.Unlock()
			return waited, nil
		}
		l.mu.Unlock()
		t := time.NewTimer(d)
		slept := time.Now() // the real time slept: l.now may be a test's clock
		select {
		case <-ctx.Done():
			t.Stop()
			if token != nil {
				token.CancelAt(l.now())
			}
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
		if b.TokensAt(now) >= float64(b.Burst()) {
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
	if l.blockedLocked(method, now) > 0 {
		return 0, false
	}
	// A token due within is reserved: owed back by the refill.
	r := l.bucketLocked(method, channel).ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait > within {
		r.CancelAt(now)
		return 0, false
	}
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
