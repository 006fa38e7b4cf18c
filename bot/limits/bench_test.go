package limits

import (
	"context"
	"testing"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
)

// BenchmarkBudgetGate is what the budgets add to a prompt and a launch:
// the gate (BeforePrompt) and the cap (BeforeLaunch), with a thread and a
// channel budget from the configuration and none in the settings (the
// store is a fake: its queries cost nothing here).
func BenchmarkBudgetGate(b *testing.B) {
	ctx := context.Background()
	ft := threadtest.New("main", "alice")
	ft.Records.Spent = map[string]float64{key: 1}
	ft.Records.DaySpent = map[string]float64{channel: 2}
	p := New(Config{ThreadUSD: 5, ChannelDayUSD: 10}).Attach(ft).(*part)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.BeforePrompt(ctx, thread.Prompt{Text: "hi"}); err != nil {
			b.Fatal(err)
		}
		var l thread.Launch
		p.BeforeLaunch(ctx, &l)
	}
}
