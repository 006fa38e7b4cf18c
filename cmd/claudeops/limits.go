package main

import (
	"math"
	"strconv"
	"time"

	"github.com/claudeops/claudeops/bot/limits"
)

// limitsConfig holds the turn timeout and the spend budgets (limits.Config).
// A budget is in US dollars, as the CLI reports cost; 0 means none.
type limitsConfig struct {
	TurnTimeout       time.Duration `env:"CLAUDEOPS_TURN_TIMEOUT" envDefault:"1h"`
	BudgetThread      float64       `env:"CLAUDEOPS_BUDGET_THREAD_USD" envDefault:"0"`
	BudgetChannelDay  float64       `env:"CLAUDEOPS_BUDGET_CHANNEL_DAY_USD" envDefault:"0"`
	BudgetScheduleRun float64       `env:"CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD" envDefault:"0"`
}

// checks are the limits' setting checks: the timeout is a wait (above 0),
// a budget is 0 (none) or a finite amount above it.
func (l limitsConfig) checks() []problem {
	return []problem{
		above0("CLAUDEOPS_TURN_TIMEOUT", l.TurnTimeout),
		budget("CLAUDEOPS_BUDGET_THREAD_USD", l.BudgetThread),
		budget("CLAUDEOPS_BUDGET_CHANNEL_DAY_USD", l.BudgetChannelDay),
		budget("CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD", l.BudgetScheduleRun),
	}
}

func budget(name string, v float64) problem {
	p := problem{name: name, value: strconv.FormatFloat(v, 'f', -1, 64)}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		p.want = "want 0 (no budget) or an amount in US dollars above 0, such as 5 or 0.50"
	}
	return p
}

func (l limitsConfig) bot() limits.Config {
	return limits.Config{
		TurnTimeout:    l.TurnTimeout,
		ThreadUSD:      l.BudgetThread,
		ChannelDayUSD:  l.BudgetChannelDay,
		ScheduleRunUSD: l.BudgetScheduleRun,
	}
}
