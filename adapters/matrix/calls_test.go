package matrix_test

import (
	"context"

	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// eventsCase is one turn shape: what alice asks, how the model answers it,
// and the most events of the bot's the room may hold for the turn.
type eventsCase struct {
	name   string
	prompt string
	most   int
}

var eventsCases = []eventsCase{
	{"short", "short", 2},
	{"short/deltas", "deltas", 2},
	{"streamed", "streamed", 6},
	{"6000chars", "stream 6000", 6},
}

// eventsScript answers "deltas" with one sentence in several deltas at
// once, "streamed" with a paragraph in 8 deltas over ~4 s, anything else
// as fakeanthropic.ChatScript does ("short": one sentence in one delta).
func eventsScript() fakeanthropic.Script {
	chat := fakeanthropic.ChatScript(nil)
	return func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		answer := func(s string, size int, delay time.Duration) fakeanthropic.Reply {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text(s)}, ChunkSize: size, ChunkDelay: delay}
		}
		switch last := req.LastUserText(); {
		case strings.HasSuffix(last, "deltas"):
			return answer("A short answer, in a few deltas.", 8, 0)
		case strings.HasSuffix(last, "streamed"):
			return answer(longAnswer(320), 40, 500*time.Millisecond)
		}
		return chat(ctx, req)
	}
}

// eventsPerTurn runs n turns of c, each in a new thread, and returns the
// bot's events per turn that the room on Dendrite holds: its messages and
// their edits, as alice's client sees them.
func eventsPerTurn(tb testing.TB, h *harness, c eventsCase, n int) float64 {
	room := h.room(false)
	events := 0
	for range n {
		root := h.mention(h.alice, room, c.prompt)
		h.waitBot(room, root, `✓ .* turns?$`)
		// Let the last edits land before counting: the turn's text is
		// final once no newer edit comes for a while.
		last, since := -1, time.Now()
		h.alice.WaitFor(wait, func() bool {
			k := 0
			for _, m := range h.alice.Thread(room, root) {
				if m.Sender == h.botUser.ID {
					k += 1 + m.Edits
				}
			}
			if k != last {
				last, since = k, time.Now()
			}
			return time.Since(since) > 2*time.Second
		})
		events += last
	}
	return float64(events) / float64(n)
}

// eventsHarness: hold is the adapter's FinalHold (0: its default).
func eventsHarness(tb testing.TB, hold time.Duration) *harness {
	return newHarness(tb, options{script: eventsScript(), mod: func(bc *bot.Config, mc *matrix.Config) {
		bc.MaxSessions = 64
		mc.EditInterval = 1500 * time.Millisecond
		mc.FinalHold = hold
	}})
}

// TestEventsPerTurn holds the bot's events per turn (its messages and
// their edits in the room on Dendrite) to what BenchmarkEventsPerTurn
// measures (docs/PERFORMANCE.md). A final text waits for its footer up to
// 2 s here, not the default: the test holds the mechanism whatever this
// machine's load; the benchmark measures the default.
func TestEventsPerTurn(t *testing.T) {
	h := eventsHarness(t, 2*time.Second)
	for _, c := range eventsCases {
		t.Run(c.name, func(t *testing.T) {
			if got := eventsPerTurn(t, h, c, 2); got > float64(c.most) {
				t.Errorf("%.1f events per turn, at most %d", got, c.most)
			}
		})
	}
}

// BenchmarkEventsPerTurn counts the events one turn adds to the room: a
// short answer (one delta, several deltas), one streamed over ~4 s, a
// 6,000-character answer; default edit interval (1.5 s). One op is one
// turn in a new thread.
func BenchmarkEventsPerTurn(b *testing.B) {
	h := eventsHarness(b, 0)
	for _, c := range eventsCases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportMetric(eventsPerTurn(b, h, c, b.N), "events/turn")
		})
	}
}
