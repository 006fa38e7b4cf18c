package fakeslack

import (
	"math"
	"time"
)

// Web API rate-limit tiers, per minute (Slack's "Rate limits" page).
const (
	tier2 = 20
	tier3 = 50
	tier4 = 100
)

// methodTiers are the per-method, per-workspace budgets. chat.postMessage is
// special (per channel) and handled in limitFor; methods not listed (and the
// "Special" auth.test) are not limited.
var methodTiers = map[string]int{
	"chat.update":                           tier3,
	"chat.delete":                           tier3,
	"chat.postEphemeral":                    tier4,
	"chat.startStream":                      tier2,
	"chat.appendStream":                     tier4,
	"chat.stopStream":                       tier2,
	"chat.getPermalink":                     tier4, // "Special"; generous
	"reactions.add":                         tier3,
	"reactions.remove":                      tier2,
	"conversations.replies":                 tier3,
	"conversations.history":                 tier3,
	"conversations.info":                    tier3,
	"conversations.open":                    tier3,
	"users.info":                            tier4,
	"files.getUploadURLExternal":            tier4,
	"files.completeUploadExternal":          tier4,
	"assistant.threads.setStatus":           tier3, // "Special"
	"assistant.threads.setSuggestedPrompts": tier4,
	"assistant.threads.setTitle":            tier4,
	"apps.connections.open":                 tier3, // Tier 1 on the old page, Tier 3 in current reference data
}

// postMessagePerChannel: chat.postMessage allows ~1 message per second per
// channel with short bursts.
const (
	postMessagePerMin = 60
	postMessageBurst  = 3
)

// bucket is a token bucket.
type bucket struct {
	tokens, cap, rate float64 // rate: tokens per second
	last              time.Time
}

func (b *bucket) take(now time.Time) (bool, time.Duration) {
	b.tokens = math.Min(b.cap, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}

// window is an open Retry-After window after a 429.
type window struct {
	until      time.Time
	retryAfter int
	// at is when the 429 was answered. A call that arrived before then was
	// already on its way and could not have honoured it (the client had
	// not seen it); only calls arriving later count as ignoring it.
	at time.Time
}

// answered429 moves the start of a Retry-After window to the moment its
// 429 went out.
func (s *Server) answered429(method string, p params) {
	key, _, _, ok := limitFor(method, p)
	if !ok {
		key = method
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, open := s.windows[key]; open {
		w.at = time.Now()
		s.windows[key] = w
	}
}

// limitFor returns the bucket key and budget of a call, ok=false if the
// method is not limited.
func limitFor(method string, p params) (key string, perMin, burst float64, ok bool) {
	if method == "chat.postMessage" {
		return method + " channel=" + p.str("channel"), postMessagePerMin, postMessageBurst, true
	}
	t, ok := methodTiers[method]
	if !ok {
		return "", 0, 0, false
	}
	// A modest burst: about six seconds' worth of the unscaled budget.
	return method, float64(t), math.Max(2, float64(t)/10), true
}

// rateLimitLocked applies Strict rate limits and records calls made inside a
// Retry-After window. It returns the Retry-After seconds of a 429, or 0.
func (s *Server) rateLimitLocked(method string, p params, now time.Time) int {
	key, perMin, burst, ok := limitFor(method, p)
	if !ok {
		key = method
	}
	if w, open := s.windows[key]; open && now.After(w.at) && now.Before(w.until) {
		s.violateLocked("%s called %.2fs after a 429 with Retry-After: %d (%s)",
			method, now.Sub(w.at).Seconds(), w.retryAfter, key)
	}
	if !s.Opts.Strict || !ok {
		return 0
	}
	b := s.buckets[key]
	if b == nil {
		b = &bucket{tokens: burst, cap: burst, rate: perMin * s.Opts.RateScale / 60, last: now}
		s.buckets[key] = b
	}
	allowed, wait := b.take(now)
	if allowed {
		return 0
	}
	ra := int(math.Ceil(wait.Seconds()))
	if ra < 1 {
		ra = 1
	}
	until := now.Add(time.Duration(ra) * time.Second)
	s.windows[key] = window{until: until, retryAfter: ra, at: until} // at: once answered
	return ra
}
