package slack_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeslack"

	slackadapter "github.com/claudeops/claudeops/adapters/slack"
)

// BenchmarkStopSaid: from a typed `stop` sent to the fake Slack mid-answer
// (the model holds its stream) to the thread showing "Stopping.", and to
// the turn's "■ Stopped" footer. One op is one turn stopped, each in a new
// thread, the real CLI and the fake model, the adapter's rate budgets
// lifted: the bot's own path and the CLI's interrupt are timed.
//
//	go test -tags goolm -run '^$' -bench StopSaid -benchtime 5x ./adapters/slack
func BenchmarkStopSaid(b *testing.B) {
	hold := make(chan struct{})
	b.Cleanup(func() { close(hold) })
	// Budgets ×1000: Slack's one post a second per channel would otherwise
	// decide (the answer, the notice and the footer are posts).
	h := newHarness(b, script(hold), fakeslack.Options{}, func(_ *bot.Config, sc *slackadapter.Config) {
		sc.RateScale = 1000
	})
	var said, stopped time.Duration
	for i := 0; b.Loop(); i++ {
		ts := h.fs.Post(alice, general, mention+fmt.Sprintf("slow please %d", i))
		h.waitThread(ts, `slow answe`)
		start := time.Now()
		h.fs.Reply(alice, general, ts, mention+"stop")
		h.waitThread(ts, `^Stopping`)
		said += time.Since(start)
		h.waitThread(ts, `■ Stopped`)
		stopped += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(said.Microseconds())/1000/n, "ms-to-stopping")
	b.ReportMetric(float64(stopped.Microseconds())/1000/n, "ms-to-stopped")
}
