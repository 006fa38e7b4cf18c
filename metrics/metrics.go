package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const ns = "claudeops"

// Buckets of the histograms, in seconds. A turn runs from seconds to an
// hour (CLAUDEOPS_TURN_TIMEOUT); the first text comes within seconds, or
// after a slot and a process start.
var (
	turnBuckets      = []float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600}
	firstTextBuckets = []float64{0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60, 120}
)

// Options are what the gauges read; nil funcs read 0.
type Options struct {
	// LiveSessions and QueuedSessions are read at each scrape: claude
	// processes running, threads waiting for a slot.
	LiveSessions, QueuedSessions func() int
	// MaxChannels caps the channels tokens and cost are kept apart for
	// (default DefaultMaxChannels); the rest are summed under "other".
	MaxChannels int
}

// DefaultMaxChannels is how many channels get series of their own.
const DefaultMaxChannels = 100

// Metrics holds the collectors. Create it with New.
type Metrics struct {
	reg *prometheus.Registry

	startFails, crashes, resumeLost      prometheus.Counter
	starts                               *prometheus.CounterVec
	turns                                *prometheus.CounterVec
	turnSeconds, firstText               prometheus.Histogram
	tokens, cost                         *prometheus.CounterVec
	approvals                            *prometheus.CounterVec
	apiCalls, rateLimited, rateLimitWait *prometheus.CounterVec
	scheduleRuns                         *prometheus.CounterVec
	triggerRequests                      *prometheus.CounterVec

	// What each label may take (labels.go).
	channels                                         *capped // (platform, channel) pairs
	platforms, methods, apiResults, turnResults      *capped
	startKinds, approvalKinds, outcomes, runStatuses *capped
	triggers, triggerOutcomes                        *capped
}

// New makes the collectors and registers them, with Go's and the
// process's, on a new registry.
func New(o Options) *Metrics {
	if o.MaxChannels <= 0 {
		o.MaxChannels = DefaultMaxChannels
	}
	m := &Metrics{
		reg:      prometheus.NewRegistry(),
		channels: newCapped(o.MaxChannels),
		methods:  newCapped(maxMethods),
	}
	for _, c := range []**capped{&m.platforms, &m.apiResults, &m.turnResults, &m.startKinds, &m.approvalKinds, &m.outcomes, &m.runStatuses, &m.triggers, &m.triggerOutcomes} {
		*c = newCapped(maxValues)
	}
	m.define()
	m.reg.MustRegister(m.collectors()...)
	m.reg.MustRegister(
		gaugeFunc("sessions_live", "Claude processes running now.", o.LiveSessions),
		gaugeFunc("sessions_queued", "Threads waiting for a session slot now.", o.QueuedSessions),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *Metrics) define() {
	m.starts = counterVec("process_starts_total", "Claude processes started, by kind: new (a fresh session) or resume (--resume of a stored one).", "kind")
	m.startFails = counter("process_start_failures_total", "Claude processes that could not be started.")
	m.crashes = counter("process_crashes_total", "Claude processes that ended without the bot stopping them.")
	m.resumeLost = counter("process_resume_failures_total", "Stored sessions that could not be resumed, so that the thread went on in a fresh one.")
	m.turns = counterVec("turns_total", "Turns ended, by result: success, error (an API error), error_during_execution, error_max_turns, error_max_budget_usd, error_other (a result subtype the bot does not know), aborted (the process ended before the turn's result), interrupted (left without a recorded end by a restart of the bot, counted by the start that closes it).", "result")
	m.turnSeconds = histogram("turn_duration_seconds", "Wall time of turns that ended in this run, from the prompt sent to claude to the turn's result or its process's end.", turnBuckets)
	m.firstText = histogram("first_text_latency_seconds", "Time from a person's message reaching the bot to the first text of its answer on the platform (posted to Slack or Matrix, after any pacing or Retry-After; written on the console).", firstTextBuckets)
	m.tokens = counterVec("tokens_total", "Tokens used by turns, by platform, channel (the platform's id; 'other' past the cap) and kind: input, output, cache_read, cache_creation.", "platform", "channel", "kind")
	m.cost = counterVec("cost_usd_total", "Cost of turns in US dollars as the CLI reports it, by platform and channel ('other' past the cap).", "platform", "channel")
	m.approvals = counterVec("approvals_total", "Permission prompts and questions put before people, by kind (tool, question) and outcome: allowed, answered, denied, expired, cancelled.", "kind", "outcome")
	m.apiCalls = counterVec("platform_api_calls_total", "Requests to a chat platform's API, each attempt counted, by platform, method and result: ok, error, rate_limited.", "platform", "method", "result")
	m.rateLimited = counterVec("platform_rate_limited_total", "Requests a chat platform answered with HTTP 429, by platform and method.", "platform", "method")
	m.rateLimitWait = counterVec("platform_rate_limit_wait_seconds_total", "Time requests were held back by a rate limit (a Retry-After, or on Slack the bot's own per-method budget), by platform and method.", "platform", "method")
	m.scheduleRuns = counterVec("schedule_runs_total", "Scheduled slots dealt with, by status: succeeded, failed, timed_out, skipped, missed, interrupted.", "status")
	m.triggerRequests = counterVec("trigger_requests_total", "Requests to a trigger's endpoint, by trigger (its name in the triggers file) and outcome: accepted, too_large, unauthorized, duplicate, bad_body, ignored, unbound, rate_limited, error.", "trigger", "outcome")
}

// collectors are the bot's own collectors (not Go's or the process's,
// nor the session gauges).
func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.starts, m.startFails, m.crashes, m.resumeLost, m.turns, m.turnSeconds, m.firstText,
		m.tokens, m.cost, m.approvals, m.apiCalls, m.rateLimited, m.rateLimitWait, m.scheduleRuns,
		m.triggerRequests,
	}
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.ContinueOnError})
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
}

func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: name, Help: help, Buckets: buckets})
}

func gaugeFunc(name, help string, f func() int) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help}, func() float64 {
		if f == nil {
			return 0
		}
		return float64(f())
	})
}

// seconds is d in seconds; a negative d (a clock step) counts as 0.
func seconds(d time.Duration) float64 { return max(d, 0).Seconds() }
