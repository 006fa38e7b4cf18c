package main

import (
	"github.com/claudeops/claudeops/bot/limits"
	"github.com/claudeops/claudeops/bot/thread"
)

// extensions are the features the bot's threads host (bot.Config.Extensions,
// package thread), built from the configuration; the bot imports none of
// them. Their order is the order their hooks run in: limits first (a
// turn's spend, and why a limit stopped it), then workspaces (the change
// summary, a scheduled run's push), then schedules (the run's record).
func extensions(cfg config) []thread.Extension {
	return []thread.Extension{
		limits.New(cfg.Limits.bot()),
	}
}
