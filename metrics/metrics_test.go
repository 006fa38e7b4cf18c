package metrics

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// exercise moves every collector once, so that each has a series to lint
// and to read.
func exercise(m *Metrics) {
	m.ProcessStarted("new")
	m.ProcessStarted("resume")
	m.ProcessStartFailed()
	m.ProcessCrashed()
	m.ResumeLost()
	m.TurnEnded("success", 3*time.Second)
	m.TurnEnded("interrupted", 0)
	m.FirstText(1500 * time.Millisecond)
	m.Spent("slack", "C0GENERAL1", Usage{Input: 10, Output: 20, CacheRead: 30, CacheCreation: 40, CostUSD: 0.25})
	m.ApprovalSettled("tool", "allowed")
	m.APICall("slack", "chat.postMessage", "ok")
	m.APICall("slack", "chat.postMessage", "rate_limited")
	m.RateLimitWait("slack", "chat.postMessage", 1200*time.Millisecond)
	m.ScheduleRuns("succeeded", 1)
	m.TriggerRequest("issue-labelled", "unauthorized")
}

// TestLint: every collector, and the session gauges, pass client_golang's
// linter (promlint: names, units, _total on counters, help).
func TestLint(t *testing.T) {
	m := New(Options{LiveSessions: func() int { return 2 }, QueuedSessions: func() int { return 1 }})
	exercise(m)
	for _, c := range m.collectors() {
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
		if n := testutil.CollectAndCount(c); n == 0 {
			t.Errorf("a collector exported nothing after being exercised")
		}
	}
	problems, err := testutil.GatherAndLint(m.reg, "claudeops_sessions_live", "claudeops_sessions_queued")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// scrape gets /metrics from h over HTTP and parses it with Prometheus'
// own text parser.
func scrape(t testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return fams
}

// value is the counter, gauge or histogram count of the series of name
// with exactly labels; ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, s := range f.GetMetric() {
		if !sameLabels(s.GetLabel(), labels) {
			continue
		}
		switch {
		case s.Counter != nil:
			return s.GetCounter().GetValue(), true
		case s.Gauge != nil:
			return s.GetGauge().GetValue(), true
		case s.Histogram != nil:
			return float64(s.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}

// TestExposition: what the methods record is what a scrape reads.
func TestExposition(t *testing.T) {
	m := New(Options{LiveSessions: func() int { return 2 }, QueuedSessions: func() int { return 1 }})
	exercise(m)
	fams := scrape(t, m.Handler())
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"claudeops_sessions_live", nil, 2},
		{"claudeops_sessions_queued", nil, 1},
		{"claudeops_process_starts_total", map[string]string{"kind": "new"}, 1},
		{"claudeops_process_starts_total", map[string]string{"kind": "resume"}, 1},
		{"claudeops_process_start_failures_total", nil, 1},
		{"claudeops_process_crashes_total", nil, 1},
		{"claudeops_process_resume_failures_total", nil, 1},
		{"claudeops_turns_total", map[string]string{"result": "success"}, 1},
		{"claudeops_turns_total", map[string]string{"result": "interrupted"}, 1},
		{"claudeops_turn_duration_seconds", nil, 1}, // the interrupted turn has no duration
		{"claudeops_first_text_latency_seconds", nil, 1},
		{"claudeops_tokens_total", map[string]string{"platform": "slack", "channel": "C0GENERAL1", "kind": "input"}, 10},
		{"claudeops_tokens_total", map[string]string{"platform": "slack", "channel": "C0GENERAL1", "kind": "output"}, 20},
		{"claudeops_tokens_total", map[string]string{"platform": "slack", "channel": "C0GENERAL1", "kind": "cache_read"}, 30},
		{"claudeops_tokens_total", map[string]string{"platform": "slack", "channel": "C0GENERAL1", "kind": "cache_creation"}, 40},
		{"claudeops_cost_usd_total", map[string]string{"platform": "slack", "channel": "C0GENERAL1"}, 0.25},
		{"claudeops_approvals_total", map[string]string{"kind": "tool", "outcome": "allowed"}, 1},
		{"claudeops_platform_api_calls_total", map[string]string{"platform": "slack", "method": "chat.postMessage", "result": "ok"}, 1},
		{"claudeops_platform_api_calls_total", map[string]string{"platform": "slack", "method": "chat.postMessage", "result": "rate_limited"}, 1},
		{"claudeops_platform_rate_limited_total", map[string]string{"platform": "slack", "method": "chat.postMessage"}, 1},
		{"claudeops_platform_rate_limit_wait_seconds_total", map[string]string{"platform": "slack", "method": "chat.postMessage"}, 1.2},
		{"claudeops_schedule_runs_total", map[string]string{"status": "succeeded"}, 1},
		{"claudeops_trigger_requests_total", map[string]string{"trigger": "issue-labelled", "outcome": "unauthorized"}, 1},
	}
	for _, tt := range tests {
		got, ok := value(fams, tt.name, tt.labels)
		if !ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s%v = %v (present %v), want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	// The histograms' buckets are the documented ones.
	h := fams["claudeops_turn_duration_seconds"].GetMetric()[0].GetHistogram()
	bs := h.GetBucket() // the text format adds +Inf
	if n, last := len(bs), bs[len(bs)-2].GetUpperBound(); n != len(turnBuckets)+1 || last != 3600 || !math.IsInf(bs[n-1].GetUpperBound(), 1) {
		t.Errorf("turn duration buckets: %d, last finite %v", n, last)
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Errorf("no Go runtime metrics")
	}
}

// TestHostileLabelValues: channel ids are the platform's, and a label
// value that is not UTF-8, holds quotes, backslashes or newlines, or is
// huge, neither breaks the exposition nor makes a series of its own
// beyond the one the channel gets. The oracle is Prometheus' parser.
func TestHostileLabelValues(t *testing.T) {
	m := New(Options{})
	hostile := []string{
		"!room:example.org",
		"C1\"} 1e9\nclaudeops_cost_usd_total{platform=\"slack\",channel=\"forged",
		"back\\slash",
		"bad\xffutf8\xfe",
		strings.Repeat("é", 500),
		"",
	}
	for _, ch := range hostile {
		m.Spent("matrix", ch, Usage{Input: 1, CostUSD: 1})
	}
	fams := scrape(t, m.Handler())
	series := fams["claudeops_cost_usd_total"].GetMetric()
	if len(series) != len(hostile) {
		t.Fatalf("%d cost series for %d channels", len(series), len(hostile))
	}
	got := map[string]bool{}
	for _, s := range series {
		for _, l := range s.GetLabel() {
			if l.GetName() == "channel" {
				got[l.GetValue()] = true
				if s.GetCounter().GetValue() != 1 {
					t.Errorf("channel %q cost %v, want 1", l.GetValue(), s.GetCounter().GetValue())
				}
			}
			if l.GetName() == "platform" && l.GetValue() != "matrix" {
				t.Errorf("platform %q", l.GetValue())
			}
		}
	}
	for _, ch := range hostile {
		if !got[clean(ch)] {
			t.Errorf("channel %q not exported as %q; got %v", ch, clean(ch), got)
		}
	}
	if got["forged"] {
		t.Errorf("a channel id forged a series")
	}
	if v := clean(strings.Repeat("é", 500)); len(v) > maxLen || !strings.HasPrefix(strings.Repeat("é", 500), v) {
		t.Errorf("long value cut to %d bytes: %q", len(v), v)
	}
	if clean("") != Unknown {
		t.Errorf("empty value: %q", clean(""))
	}
}

// TestChannelCap: past MaxChannels distinct channels, the rest are summed
// under "other": nothing is lost, the series stay bounded.
func TestChannelCap(t *testing.T) {
	const max, n = 5, 40
	m := New(Options{MaxChannels: max})
	for i := range n {
		m.Spent("slack", fmt.Sprintf("C%04d", i), Usage{Output: 2, CostUSD: 0.5})
		m.Spent("slack", fmt.Sprintf("C%04d", i), Usage{Output: 2, CostUSD: 0.5}) // again: same series
	}
	fams := scrape(t, m.Handler())
	if got := len(fams["claudeops_cost_usd_total"].GetMetric()); got != max+1 {
		t.Errorf("%d cost series, want %d", got, max+1)
	}
	other, _ := value(fams, "claudeops_cost_usd_total", map[string]string{"platform": "slack", "channel": Other})
	if want := float64(n-max) * 1.0; other != want {
		t.Errorf("other: %v, want %v", other, want)
	}
	first, _ := value(fams, "claudeops_tokens_total", map[string]string{"platform": "slack", "channel": "C0000", "kind": "output"})
	if first != 4 {
		t.Errorf("first channel's output tokens %v, want 4", first)
	}
}

// TestOtherLabelsCapped: a caller passing a new value each time (an id
// by mistake) grows no label past its cap.
func TestOtherLabelsCapped(t *testing.T) {
	m := New(Options{})
	for i := range 1000 {
		id := fmt.Sprint("id-", i)
		m.TurnEnded(id, time.Second)
		m.APICall(id, id, id)
		m.ApprovalSettled(id, id)
		m.ScheduleRuns(id, 1)
		m.ProcessStarted(id)
		m.TriggerRequest(id, id)
	}
	for _, c := range m.collectors() {
		if n := testutil.CollectAndCount(c); n > maxMethods*(maxValues+1)*(maxValues+1) {
			t.Errorf("a collector has %d series", n)
		}
	}
	fams := scrape(t, m.Handler())
	for name, limit := range map[string]int{
		"claudeops_turns_total":              maxValues + 1,
		"claudeops_approvals_total":          (maxValues + 1) * (maxValues + 1),
		"claudeops_schedule_runs_total":      maxValues + 1,
		"claudeops_trigger_requests_total":   (maxValues + 1) * (maxValues + 1),
		"claudeops_process_starts_total":     maxValues + 1,
		"claudeops_platform_api_calls_total": maxMethods + 1, // one new combination each, until method is capped too
	} {
		if got := len(fams[name].GetMetric()); got > limit {
			t.Errorf("%s: %d series, more than %d", name, got, limit)
		}
	}
}

// TestBadFigures: figures a counter cannot take (negative, NaN, infinite)
// are left out rather than panicking or poisoning the counter.
func TestBadFigures(t *testing.T) {
	m := New(Options{})
	m.Spent("console", "console", Usage{Input: 5, CostUSD: 1})
	m.Spent("console", "console", Usage{Input: -5, Output: -1, CostUSD: -1})
	m.Spent("console", "console", Usage{CostUSD: math.NaN()})
	m.Spent("console", "console", Usage{CostUSD: math.Inf(1)})
	m.RateLimitWait("slack", "chat.update", -time.Second)
	m.ScheduleRuns("failed", -3)
	m.FirstText(-time.Second) // a clock step: counted as 0
	fams := scrape(t, m.Handler())
	if v, _ := value(fams, "claudeops_cost_usd_total", map[string]string{"platform": "console", "channel": "console"}); v != 1 {
		t.Errorf("cost %v, want 1", v)
	}
	if v, _ := value(fams, "claudeops_tokens_total", map[string]string{"platform": "console", "channel": "console", "kind": "input"}); v != 5 {
		t.Errorf("input tokens %v, want 5", v)
	}
	if _, ok := fams["claudeops_platform_rate_limit_wait_seconds_total"]; ok {
		t.Errorf("a negative wait was recorded")
	}
	if _, ok := fams["claudeops_schedule_runs_total"]; ok {
		t.Errorf("a negative run count was recorded")
	}
}

// TestConcurrentUse: the observers are called from many goroutines.
func TestConcurrentUse(t *testing.T) {
	m := New(Options{MaxChannels: 3})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				m.Spent("slack", fmt.Sprint("C", (g*200+i)%10), Usage{Input: 1})
				m.APICall("slack", "chat.update", "ok")
			}
		})
	}
	wg.Wait()
	fams := scrape(t, m.Handler())
	var sum float64
	for _, s := range fams["claudeops_tokens_total"].GetMetric() {
		sum += s.GetCounter().GetValue()
	}
	if sum != 8*200 {
		t.Errorf("tokens summed to %v, want %d", sum, 8*200)
	}
	if v, _ := value(fams, "claudeops_platform_api_calls_total", map[string]string{"platform": "slack", "method": "chat.update", "result": "ok"}); v != 8*200 {
		t.Errorf("calls %v", v)
	}
}

// The observers sit on each platform request and each turn, not on each
// streamed delta; these say what one call costs.
func BenchmarkAPICall(b *testing.B) {
	m := New(Options{})
	for b.Loop() {
		m.APICall("slack", "chat.update", "ok")
	}
}

func BenchmarkSpent(b *testing.B) {
	m := New(Options{})
	u := Usage{Input: 100, Output: 200, CacheRead: 300, CacheCreation: 400, CostUSD: 0.01}
	for b.Loop() {
		m.Spent("slack", "C0GENERAL1", u)
	}
}

func BenchmarkTurnEnded(b *testing.B) {
	m := New(Options{})
	for b.Loop() {
		m.TurnEnded("success", 12*time.Second)
		m.FirstText(time.Second)
	}
}
