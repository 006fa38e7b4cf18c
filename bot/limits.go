package bot

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Limits bound what turns may take: time (TurnTimeout) and money (the
// budgets, in US dollars as the CLI reports cost). A budget of 0 is no
// budget. Budgets bind everyone, admins and the console's operator too:
// they are the operator's setting, not a permission.
type Limits struct {
	// TurnTimeout bounds the time a turn works. Time a turn spends waiting
	// for a person's decision (an approval, a question) is not counted:
	// that wait has its own deadline (CLAUDEOPS_APPROVAL_TIMEOUT, or a
	// parked scheduled request's). Default 1h.
	TurnTimeout time.Duration
	// ThreadUSD bounds what one thread spends, over all its sessions.
	ThreadUSD float64
	// ChannelDayUSD bounds what one channel's threads, scheduled runs
	// included, spend in a day (00:00 to 24:00 UTC, the day `cost` shows).
	ChannelDayUSD float64
	// ScheduleRunUSD bounds what one scheduled run spends (its turn; what
	// people say in the run's thread afterwards is the thread's).
	ScheduleRunUSD float64
}

func (l *Limits) defaults() {
	if l.TurnTimeout <= 0 {
		l.TurnTimeout = time.Hour
	}
}

// budgeted: some budget is set.
func (l Limits) budgeted() bool {
	return l.ThreadUSD > 0 || l.ChannelDayUSD > 0 || l.ScheduleRunUSD > 0
}

// The names people see for the limits: the variable that sets each.
const (
	envTurnTimeout    = "CLAUDEOPS_TURN_TIMEOUT"
	envBudgetThread   = "CLAUDEOPS_BUDGET_THREAD_USD"
	envBudgetChannel  = "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD"
	envBudgetSchedule = "CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD"
)

// formatLimit renders a configured duration as an operator wrote it: 1h,
// 90m, 2s (not 1h0m0s).
func formatLimit(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// usd renders a budget as it was set ($5, $0.25); spent renders a spend
// to the hundredth of a cent as `cost` shows it, or to the millionth of a
// dollar below a cent.
func usd(v float64) string { return "$" + strconv.FormatFloat(v, 'f', -1, 64) }

func spent(v float64) string {
	if v > 0 && v < 0.01 {
		// Small sums keep their digits: "$0.0001 of $0.0001" would not say
		// that the budget was crossed.
		return "$" + strconv.FormatFloat(v, 'f', 6, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 4, 64)
}

// dayStart is the start of t's day in UTC: the channel budget's day.
func dayStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// interruptTurn stops the running turn the way `stop` does: the CLI is
// interrupted (queued messages dropped), open prompts are cancelled
// saying why. A process that does not take the interrupt within the stop
// grace is closed; one that takes it has the stop grace again to end the
// turn (the turn clock closes it if it does not).
func (w *worker) interruptTurn(ctx context.Context, why string) {
	if !w.sess.live() {
		return
	}
	ictx, cancel := context.WithTimeout(ctx, w.cfg.StopGrace)
	_, err := w.sess.proc.Interrupt(ictx, true)
	cancel()
	if err != nil {
		w.log.Warn("interrupt did not go through; closing the process", "why", why, "err", err)
		w.stop(why)
		return
	}
	w.cancelPrompts(ctx, why)
	w.clock.graceFor(w.view.turn, why, w.cfg.StopGrace)
}
