package slack

import (
	"context"
	"errors"
	"fmt"
	"github.com/claudeops/claudeops/internal/testkit"
	"testing"
	"time"
)

// TestLimiterTake: the budget's arithmetic on a clock that moves only when
// told. chat.update is 50 a minute with a burst of 5 (one token per 1.2 s);
// at scale 10, one per 120 ms.
func TestLimiterTake(t *testing.T) {
	type step struct {
		advance time.Duration // first
		penalty time.Duration // then a 429 on method with this Retry-After
		method  string        // then a take of method (default chat.update)
		channel string
		within  time.Duration
		ok      bool
		wait    time.Duration // what take says to wait for the token
	}
	const upd, post = "chat.update", "chat.postMessage"
	burst := func(method, channel string, n int) []step {
		s := make([]step, n)
		for i := range s {
			s[i] = step{method: method, channel: channel, ok: true}
		}
		return s
	}
	cases := []struct {
		name  string
		scale float64
		steps []step
	}{
		{"a burst goes at once, then none", 1, append(burst(upd, "", 5),
			step{}, step{within: time.Second})},
		{"the refill is paced", 1, append(burst(upd, "", 5),
			step{advance: 1190 * time.Millisecond},
			step{advance: 20 * time.Millisecond, ok: true},
			step{advance: 6 * time.Second, ok: true},
			step{ok: true}, step{ok: true}, step{ok: true}, step{ok: true}, step{})},
		{"a token due soon is reserved and owed", 10, append(burst(upd, "", 5),
			step{within: budgetWait, ok: true, wait: 120 * time.Millisecond},
			step{within: budgetWait, ok: true, wait: 240 * time.Millisecond},
			step{within: budgetWait},
			step{advance: 240 * time.Millisecond, within: budgetWait, ok: true, wait: 120 * time.Millisecond})},
		{"a refused take owes nothing", 10, append(burst(upd, "", 5),
			step{within: 100 * time.Millisecond}, step{within: 100 * time.Millisecond},
			step{advance: 130 * time.Millisecond, ok: true})},
		{"the burst is the cap", 1, append(append(burst(upd, "", 5), step{advance: time.Hour, ok: true}),
			append(burst(upd, "", 4), step{})...)},
		{"a Retry-After holds its method only", 1, []step{
			{penalty: 2 * time.Second},
			{within: time.Hour},
			{method: "chat.delete", ok: true},
			{advance: 1999 * time.Millisecond},
			{advance: time.Millisecond, ok: true}}},
		{"a zero Retry-After holds a second", 1, []step{
			{penalty: -1}, {advance: 999 * time.Millisecond}, {advance: time.Millisecond, ok: true}}},
		{"chat.postMessage is paced per channel", 1, append(append(burst(post, "C1", 3),
			step{method: post, channel: "C1"}), burst(post, "C2", 3)...)},
		{"an unlisted method has Tier 3's budget", 1, append(burst("pins.add", "", 5), step{method: "pins.add"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
			l := newLimiter(c.scale, clk.Now)
			for i, s := range c.steps {
				clk.Advance(s.advance)
				method := s.method
				if method == "" {
					method = upd
				}
				if s.penalty != 0 {
					l.penalize(method, max(0, s.penalty))
					continue
				}
				wait, ok := l.take(method, s.channel, s.within)
				if ok != s.ok || (wait-s.wait).Abs() > time.Millisecond {
					t.Fatalf("step %d: take %s = %v, %v; want %v, %v", i, method, wait, ok, s.wait, s.ok)
				}
			}
		})
	}
}

// TestLimiterForgetsIdleBudgets: a budget that has refilled, and a
// Retry-After that has passed, are forgotten at the next sweep, so that a
// budget per channel does not outlive its channel's use.
func TestLimiterForgetsIdleBudgets(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	l := newLimiter(1, clk.Now)
	for i := range 100 {
		l.take("chat.postMessage", fmt.Sprint("C", i), 0)
	}
	l.penalize("chat.update", time.Second)
	if n := l.sizes(); n != 101 {
		t.Fatalf("%d budgets held, want 101", n)
	}
	clk.Advance(time.Minute)
	if _, err := l.wait(context.Background(), "chat.delete", ""); err != nil { // sweeps; its own budget is not full
		t.Fatal(err)
	}
	if n := l.sizes(); n != 1 {
		t.Errorf("%d budgets held after a sweep, want 1", n)
	}
}

// TestLimiterWait: wait sleeps for the token or the Retry-After, in real
// time; a wait given up owes no token.
func TestLimiterWait(t *testing.T) {
	ctx := context.Background()
	t.Run("for the next token", func(t *testing.T) {
		l := newLimiter(120, time.Now) // chat.update: a token per 10 ms
		for range 5 {
			if d, err := l.wait(ctx, "chat.update", ""); err != nil || d != 0 {
				t.Fatalf("in the burst: waited %v, %v", d, err)
			}
		}
		start := time.Now()
		if _, err := l.wait(ctx, "chat.update", ""); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 8*time.Millisecond {
			t.Errorf("the sixth call went after %v, want about 10 ms", d)
		}
	})
	t.Run("for a Retry-After", func(t *testing.T) {
		l := newLimiter(1, time.Now)
		l.penalize("chat.update", 50*time.Millisecond)
		d, err := l.wait(ctx, "chat.update", "")
		if err != nil || d < 40*time.Millisecond {
			t.Errorf("waited %v, %v; want the Retry-After's 50 ms", d, err)
		}
	})
	t.Run("given up", func(t *testing.T) {
		l := newLimiter(1, time.Now) // chat.update: a token per 1.2 s
		for range 5 {
			l.take("chat.update", "", 0)
		}
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		if _, err := l.wait(short, "chat.update", ""); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("wait = %v, want the context's end", err)
		}
		// Had the abandoned wait kept a token, the next would be 2.4 s away.
		if d, ok := l.take("chat.update", "", 1300*time.Millisecond); !ok || d > 1200*time.Millisecond {
			t.Errorf("take after an abandoned wait = %v, %v; want within 1.2 s", d, ok)
		}
	})
}

// BenchmarkLimiter: the limiter's own cost per Web API call, with a token
// always there (scaled far up) or never (a refusal); chat.postMessage
// across 1,000 channels keeps a budget per channel.
func BenchmarkLimiter(b *testing.B) {
	ctx := context.Background()
	channels := make([]string, 1000)
	for i := range channels {
		channels[i] = fmt.Sprint("C", i)
	}
	cases := []struct {
		name  string
		scale float64
		op    func(l *limiter, i int)
	}{
		{"wait", 1e9, func(l *limiter, _ int) { _, _ = l.wait(ctx, "chat.update", "") }},
		{"wait per channel", 1e9, func(l *limiter, i int) { _, _ = l.wait(ctx, "chat.postMessage", channels[i%len(channels)]) }},
		{"take", 1e9, func(l *limiter, _ int) { l.take("chat.update", "", budgetWait) }},
		{"take refused", 1e-9, func(l *limiter, _ int) { l.take("chat.update", "", budgetWait) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			l := newLimiter(c.scale, time.Now)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c.op(l, i)
			}
		})
	}
}
