package slack_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeslack"

	slackadapter "github.com/claudeops/claudeops/adapters/slack"
)

// threadText joins what the bot's text messages show in a thread, undoing
// only what rendering adds (mention neutralising, the fences Split adds).
func threadText(h *harness, ts string) string {
	var parts []string
	for _, m := range h.fs.Thread(general, ts) {
		if m.BotID == "" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = jsonUnmarshal(m.Blocks, &blocks)
		for _, b := range blocks {
			if b.Type == "markdown" {
				parts = append(parts, strings.ReplaceAll(b.Text, "\u200b", ""))
			}
		}
		if m.MarkdownText != "" && len(blocks) == 0 {
			parts = append(parts, strings.ReplaceAll(m.MarkdownText, "\u200b", ""))
		}
	}
	return strings.Join(parts, "")
}

func TestLongAnswerArrivesWhole(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			h := newHarness(t, script(nil), fakeslack.Options{Streaming: streaming}, nil)
			ts := h.fs.Post(alice, general, mention+"long please")
			h.waitThread(ts, `✓ .* turns?$`)
			want := longAnswer(60000)
			if !h.fs.WaitFor(wait, func() bool { return len(threadText(h, ts)) >= len(want) }) {
				t.Fatalf("only %d of %d characters arrived", len(threadText(h, ts)), len(want))
			}
			if got := threadText(h, ts); !sameModuloFences(got, want) {
				t.Errorf("text differs: got %d bytes, want %d", len(got), len(want))
			}
			streams := 0
			for _, c := range h.fs.Calls("chat.startStream") {
				if c.Error == "" {
					streams++
				}
			}
			if streaming != (streams > 0) {
				t.Errorf("streaming=%v but %d streams were started", streaming, streams)
			}
			h.noViolations()
		})
	}
}

// sameModuloFences compares ignoring the fence lines Split adds at cuts.
func sameModuloFences(got, want string) bool {
	strip := func(s string) string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				continue
			}
			out = append(out, strings.TrimSpace(l))
		}
		return strings.Join(strings.Fields(strings.Join(out, " ")), " ")
	}
	return strip(got) == strip(want)
}

// TestStrictRateLimitsManyThreads: 20 threads stream at once under Slack's
// real per-method budgets (scaled up 3×; the adapter assumes 100×): no call
// is made inside a Retry-After, and every thread's final text is complete.
// The budgets alone do not promise a 429: on a loaded machine slow CLI
// starts spread the calls until they fit (99 calls, none refused, once with
// the minimum CLI beside the Docker and Kubernetes tests). So the first
// posts are answered 429 whatever the load, and the test always meets a
// Retry-After.
func TestStrictRateLimitsManyThreads(t *testing.T) {
	const threads = 20
	h := newHarness(t, script(nil), fakeslack.Options{Strict: true, RateScale: 3}, func(bc *bot.Config, sc *slackadapter.Config) {
		bc.MaxSessions = 5
		bc.MaxThreadsPerUser = -1 // one person opens every thread: this is about rate limits, not quotas
		// Far above the fake's budget: Slack answers 429s, which must be
		// waited out (one call per budget in flight makes bursts smaller).
		sc.RateScale = 100
	})
	h.fs.Fail("chat.postMessage", fakeslack.Fault{RetryAfter: 1, Times: 3})
	var roots []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts := h.fs.Post(alice, general, mention+fmt.Sprintf("thread %02d says hello with a longer message so that it streams", i))
			mu.Lock()
			roots = append(roots, ts)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, ts := range roots {
		h.waitThread(ts, `✓ .* turns?$`)
		// The whole answer, at the end of its text; the footer may show
		// under it in the same message (heldstop.go).
		m := h.waitThread(ts, `ok: thread \d\d says hello with a longer message so that it streams(\n✓ .* turns?)?$`)
		if len(m.ActionIDs()) != 0 {
			// The final version (without the Stop button) must land.
			if !h.fs.WaitFor(wait, func() bool { x, _ := h.fs.Message(general, m.TS); return len(x.ActionIDs()) == 0 }) {
				t.Errorf("thread %s: final text never landed", ts)
			}
		}
	}
	h.noViolations()
	limited := 0
	for _, c := range h.fs.Calls("") {
		if c.Status == 429 {
			limited++
		}
	}
	t.Logf("%d calls, %d answered 429", len(h.fs.Calls("")), limited)
	if limited == 0 {
		t.Error("no call was rate limited: the test did not exercise Retry-After")
	}
}

// TestStreamBudgetSpentFallsBack: native streaming on, at Slack's real
// budgets (chat.startStream: 20 a minute for the workspace, 3 at once):
// 12 threads answer at once. The streams the budget allows are started;
// every other thread is answered at once through chat.postMessage and
// paced chat.update instead of waiting for the stream budget, so every
// thread ends with its whole text, and no more streams were started than
// the budget allowed in the time the test took.
func TestStreamBudgetSpentFallsBack(t *testing.T) {
	const threads = 12
	start := time.Now()
	h := newHarness(t, script(nil), fakeslack.Options{Strict: true, Streaming: true, RateScale: 1}, func(bc *bot.Config, sc *slackadapter.Config) {
		bc.MaxSessions = threads
		bc.MaxThreadsPerUser = -1
		sc.RateScale = 1
	})
	var roots []string
	for i := range threads {
		roots = append(roots, h.fs.Post(alice, general, mention+fmt.Sprintf("thread %02d says hello with a longer message so that it streams", i)))
	}
	for _, ts := range roots {
		h.waitFinal(ts, `ok: thread \d\d says hello with a longer message so that it streams`)
	}
	streams := 0
	for _, c := range h.fs.Calls("chat.startStream") {
		if c.Error == "" && c.Status == 200 {
			streams++
		}
	}
	// 3 at once, then one every 3 s.
	budget := 3 + int(time.Since(start)/(3*time.Second)) + 1
	t.Logf("%d threads: %d native streams (budget %d), the rest by chat.postMessage", threads, streams, budget)
	if streams > budget {
		t.Errorf("%d streams started, more than the budget of %d: threads waited for it", streams, budget)
	}
	if streams == threads {
		t.Error("every thread streamed: the budget never ran out, the test proves nothing")
	}
	h.noViolations()
}
