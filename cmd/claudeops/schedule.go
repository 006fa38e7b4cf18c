package main

import (
	"context"
	"time"

	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/scheduler"
	"github.com/claudeops/claudeops/store"
)

// botRunner lets the scheduler run prompts through the bot (the scheduler
// knows a Runner; the bot knows nothing of the scheduler).
type botRunner struct{ b *bot.Bot }

func (r botRunner) RunScheduled(ctx context.Context, s scheduler.Schedule, slot time.Time) (scheduler.RunResult, error) {
	res, err := r.b.RunScheduled(ctx, s, slot)
	return scheduler.RunResult{
		SessionID: res.SessionID, ThreadKey: res.ThreadKey, Text: res.Text, CostUSD: res.CostUSD,
		InputTokens: res.InputTokens, OutputTokens: res.OutputTokens, NumTurns: res.NumTurns,
	}, err
}

// schedulerCommands lets the bot's schedule commands drive the scheduler.
type schedulerCommands struct{ s *scheduler.Scheduler }

func (c schedulerCommands) Add(ctx context.Context, sc store.Schedule) (store.Schedule, []time.Time, error) {
	added, err := c.s.Add(ctx, sc)
	if err != nil {
		return added, nil, err
	}
	next, err := c.Next(added, 3)
	return added, next, err
}

func (c schedulerCommands) Next(sc store.Schedule, n int) ([]time.Time, error) {
	_, spec, err := c.s.Normalize(sc)
	if err != nil {
		return nil, err
	}
	return spec.NextN(time.Now(), n), nil
}

func (c schedulerCommands) SetPaused(ctx context.Context, id int64, paused bool) error {
	return c.s.SetPaused(ctx, id, paused)
}

func (c schedulerCommands) Remove(ctx context.Context, id int64) error { return c.s.Remove(ctx, id) }

func (c schedulerCommands) RunNow(ctx context.Context, id int64) (time.Time, error) {
	return c.s.RunNow(ctx, id)
}
