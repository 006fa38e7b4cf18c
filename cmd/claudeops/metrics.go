package main

import (
	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/metrics"
	"github.com/claudeops/claudeops/scheduler"
)

// observe makes what /metrics shows (a.met) and returns the bot's
// observer. The adapters and the scheduler are given a.met as they are
// made (run.go). The session gauges read the bot at each scrape, once it
// exists.
func (a *app) observe() bot.Observer {
	a.met = metrics.New(metrics.Options{
		LiveSessions:   func() int { return a.b.LiveSessions() },
		QueuedSessions: func() int { return a.b.QueuedSessions() },
	})
	return botObserver{a.met}
}

// botObserver tells the metrics what the bot observes, in their terms.
type botObserver struct{ *metrics.Metrics }

var (
	_ bot.Observer         = botObserver{}
	_ scheduler.Observer   = (*metrics.Metrics)(nil)
	_ adapters.APIObserver = (*metrics.Metrics)(nil)
)

func (o botObserver) ProcessStarted(resumed bool) {
	kind := "new"
	if resumed {
		kind = "resume"
	}
	o.Metrics.ProcessStarted(kind)
}

// Spent keeps of the thread only its platform and channel id.
func (o botObserver) Spent(t adapters.ThreadRef, u bot.Usage) {
	o.Metrics.Spent(t.Platform, t.Channel, metrics.Usage{
		Input: u.InputTokens, Output: u.OutputTokens,
		CacheRead: u.CacheReadTokens, CacheCreation: u.CacheCreationTokens,
		CostUSD: u.CostUSD,
	})
}
