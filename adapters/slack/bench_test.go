package slack_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"

	"context"

	slackadapter "github.com/claudeops/claudeops/adapters/slack"
)

// BenchmarkAPICallsPerTurn counts the Slack Web API calls one turn costs:
// a short answer, and a 6,000-character answer streamed in 40-character
// deltas over ~3 s (with native streaming, and with paced chat.update at
// the default 2 s edit interval). One op is one turn in a new thread.
func BenchmarkAPICallsPerTurn(b *testing.B) {
	for _, c := range turnCases {
		b.Run(c.name, func(b *testing.B) {
			h := turnHarness(b, c, 0)
			b.ResetTimer()
			calls, byMethod := callsPerTurn(h, c, b.N)
			b.StopTimer()
			b.ReportMetric(calls, "calls/turn")
			for m, n := range byMethod {
				b.ReportMetric(n, m+"/turn")
			}
		})
	}
}

// TestAPICallsPerTurn holds the calls per turn BenchmarkAPICallsPerTurn
// measures (docs/PERFORMANCE.md) to what they are: a turn must not cost
// more Slack calls than this. A final text waits for its footer up to 2 s
// here, not the default: the test holds the mechanism whatever this
// machine's load (the CLI's result and the turn's record may then take
// longer than the default hold); the benchmark measures the default.
func TestAPICallsPerTurn(t *testing.T) {
	for _, c := range turnCases {
		t.Run(c.name, func(t *testing.T) {
			h := turnHarness(t, c, 2*time.Second)
			calls, byMethod := callsPerTurn(h, c, 2)
			if calls > c.most {
				t.Errorf("%.1f calls per turn, at most %.0f: %v", calls, c.most, byMethod)
			}
		})
	}
}

type turnCase struct {
	name      string
	prompt    string
	streaming bool
	most      float64 // calls per turn at most (TestAPICallsPerTurn)
}

var turnCases = []turnCase{
	{"short", "short", false, 3},
	{"short/deltas", "deltas", false, 3},
	{"streamed", "streamed", false, 6},
	{"6000chars/chat.update", "long6k", false, 6},
	{"6000chars/streaming", "long6k", true, 6},
}

// turnHarness is a harness whose model answers "long6k" with 6,000
// characters in 40-character deltas, "deltas" with one sentence in
// several deltas at once, "streamed" with a paragraph in 8 deltas over
// ~4 s, anything else with one sentence in one delta. hold is the
// adapter's FinalHold (0: its default).
func turnHarness(tb testing.TB, c turnCase, hold time.Duration) *harness {
	answer6k := longAnswer(6000)
	return newHarness(tb, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		answer := func(s string, size int, delay time.Duration) fakeanthropic.Reply {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text(s)}, ChunkSize: size, ChunkDelay: delay}
		}
		switch last := req.LastUserText(); {
		case strings.HasSuffix(last, "long6k"):
			return answer(answer6k, 40, 20*time.Millisecond)
		case strings.HasSuffix(last, "deltas"):
			return answer("A short answer, in a few deltas.", 8, 0)
		case strings.HasSuffix(last, "streamed"):
			return answer(longAnswer(320), 40, 500*time.Millisecond)
		}
		return text("A short answer.")
	}, fakeslack.Options{Streaming: c.streaming}, func(bc *bot.Config, sc *slackadapter.Config) {
		sc.EditInterval = 2 * time.Second
		sc.FinalHold = hold
	})
}

// callsPerTurn runs n turns of c, each in a new thread, and returns the
// Web API calls they made per turn, in all and by method.
func callsPerTurn(h *harness, c turnCase, n int) (float64, map[string]float64) {
	before := len(h.fs.Calls(""))
	for i := range n {
		ts := h.fs.Post(alice, general, mention+c.prompt+fmt.Sprintf(" %d ", i)+c.prompt)
		h.waitThread(ts, `✓ .* turns?$`)
		// Let the last coalesced edits land before counting.
		h.fs.WaitFor(10*time.Second, func() bool {
			for _, m := range h.fs.Thread(general, ts) {
				if m.BotID != "" && len(m.ActionIDs()) > 0 {
					return false
				}
			}
			return true
		})
	}
	calls := h.fs.Calls("")[before:]
	byMethod := map[string]float64{}
	for _, c := range calls {
		byMethod[c.Method] += 1 / float64(n)
	}
	return float64(len(calls)) / float64(n), byMethod
}

// BenchmarkFinalTextVisible: from the adapter receiving a text's final
// Edit (the model's turn has ended) to the fake Slack holding that text,
// for a message whose live edits are paced at the default 2 s: the final
// state is urgent and does not wait for the interval. One op is one
// answer: posted live, edited live once, then final.
//
//	go test -tags goolm -run '^$' -bench FinalTextVisible -benchtime 20x ./adapters/slack
func BenchmarkFinalTextVisible(b *testing.B) {
	s := newSoloWith(b, fakeslack.Options{NoBotEcho: true}, func(c *slackadapter.Config) {
		c.EditInterval = 2 * time.Second
		c.RateScale = 1000
	})
	ctx := context.Background()
	th := s.thread()
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("answer %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		_ = s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("answer %d, more", i)})
		final := fmt.Sprintf("answer %d, whole and final", i)
		start := time.Now()
		_ = s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: final, Final: true})
		s.waitMessage(general, ref.ID, final)
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/final-visible")
}
