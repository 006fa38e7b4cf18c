package metrics

import (
	"math"
	"time"
)

// Token kinds, the values of tokens_total's kind label.
const (
	TokensInput         = "input"
	TokensOutput        = "output"
	TokensCacheRead     = "cache_read"
	TokensCacheCreation = "cache_creation"
)

// ProcessStarted: a claude process started; kind is "new" or "resume".
func (m *Metrics) ProcessStarted(kind string) {
	m.starts.WithLabelValues(m.startKinds.value(kind)).Inc()
}

// ProcessStartFailed: a claude process could not be started.
func (m *Metrics) ProcessStartFailed() { m.startFails.Inc() }

// ProcessCrashed: a claude process ended without the bot stopping it.
func (m *Metrics) ProcessCrashed() { m.crashes.Inc() }

// ResumeLost: a stored session could not be resumed; a fresh one started.
func (m *Metrics) ResumeLost() { m.resumeLost.Inc() }

// TurnEnded: a turn ended with result after took; took <= 0 means not
// known (a turn closed at start), and only the count moves.
func (m *Metrics) TurnEnded(result string, took time.Duration) {
	m.turns.WithLabelValues(m.turnResults.value(result)).Inc()
	if took > 0 {
		m.turnSeconds.Observe(took.Seconds())
	}
}

// FirstText: the first text of an answer was posted wait after the
// message that asked for it reached the bot.
func (m *Metrics) FirstText(wait time.Duration) { m.firstText.Observe(seconds(wait)) }

// Usage is what one turn used.
type Usage struct {
	Input, Output, CacheRead, CacheCreation int64
	CostUSD                                 float64
}

// Spent adds what a turn in channel (the platform's id for it) used.
// Figures that are not positive and finite are left out: a counter only
// goes up, and one NaN would stay in it for good.
func (m *Metrics) Spent(platform, channel string, u Usage) {
	p, c := m.channels.pair(m.platforms.value(platform), channel)
	for _, t := range []struct {
		kind string
		n    int64
	}{{TokensInput, u.Input}, {TokensOutput, u.Output}, {TokensCacheRead, u.CacheRead}, {TokensCacheCreation, u.CacheCreation}} {
		if t.n > 0 {
			m.tokens.WithLabelValues(p, c, t.kind).Add(float64(t.n))
		}
	}
	if u.CostUSD > 0 && !math.IsInf(u.CostUSD, 0) {
		m.cost.WithLabelValues(p, c).Add(u.CostUSD)
	}
}

// ApprovalSettled: a prompt put before people ended. kind is "tool" or
// "question"; outcome allowed, answered, denied, expired or cancelled.
func (m *Metrics) ApprovalSettled(kind, outcome string) {
	m.approvals.WithLabelValues(m.approvalKinds.value(kind), m.outcomes.value(outcome)).Inc()
}

// APICall: one request to a platform (an attempt: a retried request
// counts again) ended with result: "ok", "error" or "rate_limited" (an
// HTTP 429, also counted in platform_rate_limited_total).
func (m *Metrics) APICall(platform, method, result string) {
	p, meth, r := m.platforms.value(platform), m.methods.value(method), m.apiResults.value(result)
	m.apiCalls.WithLabelValues(p, meth, r).Inc()
	if result == "rate_limited" {
		m.rateLimited.WithLabelValues(p, meth).Inc()
	}
}

// RateLimitWait: a request of method was held back d by a rate limit.
func (m *Metrics) RateLimitWait(platform, method string, d time.Duration) {
	if d <= 0 {
		return
	}
	m.rateLimitWait.WithLabelValues(m.platforms.value(platform), m.methods.value(method)).Add(d.Seconds())
}

// ScheduleRuns: n scheduled slots ended with status (a missed row stands
// for every slot it counts).
func (m *Metrics) ScheduleRuns(status string, n int) {
	if n > 0 {
		m.scheduleRuns.WithLabelValues(m.runStatuses.value(status)).Add(float64(n))
	}
}

// TriggerRequest: a request to trigger's endpoint came to outcome (an
// unknown trigger's name, the sender's, is never passed).
func (m *Metrics) TriggerRequest(trigger, outcome string) {
	m.triggerRequests.WithLabelValues(m.triggers.value(trigger), m.triggerOutcomes.value(outcome)).Inc()
}
