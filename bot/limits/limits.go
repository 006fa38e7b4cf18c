package limits

import (
	"strconv"
	"time"

	"github.com/claudeops/claudeops/bot/thread"
)

// Config bounds what turns may take: time (TurnTimeout) and money (the
// budgets, in US dollars as the CLI reports cost). A budget of 0 is none.
// cmd/claudeops parses the environment into it by the env tags.
type Config struct {
	// TurnTimeout bounds the time a turn works. Time a turn spends
	// waiting for a person's decision (an approval, a question) is not
	// counted: that wait has its own deadline. Default 1h.
	TurnTimeout time.Duration `env:"CLAUDEOPS_TURN_TIMEOUT" envDefault:"1h"`
	// ThreadUSD bounds what one thread spends, over all its sessions.
	ThreadUSD float64 `env:"CLAUDEOPS_BUDGET_THREAD_USD" envDefault:"0"`
	// ChannelDayUSD bounds what one channel's threads, scheduled runs
	// included, spend in a day (00:00 to 24:00 UTC, the day `cost` shows).
	ChannelDayUSD float64 `env:"CLAUDEOPS_BUDGET_CHANNEL_DAY_USD" envDefault:"0"`
	// ScheduleRunUSD bounds what one scheduled run spends (its turn; what
	// people say in the run's thread afterwards is the thread's).
	ScheduleRunUSD float64 `env:"CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD" envDefault:"0"`
	// Timers start the turn clock's timers; nil: the real ones. The clock
	// reads the time from the thread (thread.Thread.Now): a test with a
	// clock of its own gives both, and so decides when a turn's time is
	// up, whatever the machine's load.
	Timers Timers `env:"-"`
}

// Timers start timers: f runs once d has passed, unless stop comes first
// (stop says whether it did).
type Timers interface {
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// realTimers are time.AfterFunc's.
type realTimers struct{}

func (realTimers) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// The names people see for the limits: the variable that sets each.
const (
	envTurnTimeout    = "CLAUDEOPS_TURN_TIMEOUT"
	envBudgetThread   = "CLAUDEOPS_BUDGET_THREAD_USD"
	envBudgetChannel  = "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD"
	envBudgetSchedule = "CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD"
)

// Extension is the limits extension: one per bot.
type Extension struct{ cfg Config }

// New makes the extension; a TurnTimeout of 0 takes the default.
func New(cfg Config) *Extension {
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = time.Hour
	}
	if cfg.Timers == nil {
		cfg.Timers = realTimers{}
	}
	return &Extension{cfg: cfg}
}

// Config is the extension's configuration, its defaults applied.
func (e *Extension) Config() Config { return e.cfg }

func (e *Extension) Name() string     { return "limits" }
func (e *Extension) Init(thread.Host) {}

// Attach makes the extension's part in thread t.
func (e *Extension) Attach(t thread.Thread) any { return &part{cfg: e.cfg, t: t} }

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
