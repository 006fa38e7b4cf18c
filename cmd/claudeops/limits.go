package main

import (
	"math"
	"strconv"

	"github.com/claudeops/claudeops/bot/limits"
)

// limitChecks are the limits' setting checks (limits.Config carries their
// env tags): the timeout is a wait (above 0), a budget is 0 (none) or a
// finite amount above it.
func limitChecks(l limits.Config) []problem {
	return []problem{
		above0("CLAUDEOPS_TURN_TIMEOUT", l.TurnTimeout),
		budget("CLAUDEOPS_BUDGET_THREAD_USD", l.ThreadUSD),
		budget("CLAUDEOPS_BUDGET_CHANNEL_DAY_USD", l.ChannelDayUSD),
		budget("CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD", l.ScheduleRunUSD),
	}
}

func budget(name string, v float64) problem {
	p := problem{name: name, value: strconv.FormatFloat(v, 'f', -1, 64)}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		p.want = "want 0 (no budget) or an amount in US dollars above 0, such as 5 or 0.50"
	}
	return p
}
