package limits

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

const key, channel = "console/console/main", "console/console"

func TestBudgetGateAndCap(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		spent  float64 // the thread's
		day    float64 // the channel's today
		err    error   // the store's
		run    bool
		refuse string // the refusal, "" for none
		capArg string // --max-budget-usd, "" for none
	}{
		{name: "no budget", cfg: Config{}},
		{name: "thread budget left", cfg: Config{ThreadUSD: 5}, spent: 1, capArg: "4"},
		{name: "thread budget spent", cfg: Config{ThreadUSD: 5}, spent: 5,
			refuse: "this thread's budget is spent: $5.0000 of $5 (CLAUDEOPS_BUDGET_THREAD_USD)", capArg: "0.000001"},
		{name: "a tiny spend keeps its digits", cfg: Config{ThreadUSD: 0.0001}, spent: 0.0002,
			refuse: "this thread's budget is spent: $0.000200 of $0.0001 (CLAUDEOPS_BUDGET_THREAD_USD)", capArg: "0.000001"},
		{name: "the tightest budget caps", cfg: Config{ThreadUSD: 5, ChannelDayUSD: 10}, spent: 1, day: 8, capArg: "2"},
		{name: "channel budget spent", cfg: Config{ChannelDayUSD: 10}, day: 10,
			refuse: "this channel's budget for today is spent: $10.0000 of $10 (CLAUDEOPS_BUDGET_CHANNEL_DAY_USD); it renews at 00:00 UTC", capArg: "0.000001"},
		{name: "a run's budget applies to runs", cfg: Config{ThreadUSD: 5, ScheduleRunUSD: 0.25}, run: true, capArg: "0.25"},
		{name: "and not to people", cfg: Config{ScheduleRunUSD: 0.25}},
		{name: "an unreadable spend refuses", cfg: Config{ThreadUSD: 5}, err: errors.New("disk"),
			refuse: "the spend of this thread could not be read to check its budget", capArg: "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ft := threadtest.New("main", "alice")
			ft.Records.Spent = map[string]float64{key: tt.spent}
			ft.Records.DaySpent = map[string]float64{channel: tt.day}
			ft.Records.Err = tt.err
			if tt.run {
				ft.Doing = &thread.Run{Schedule: store.Schedule{ID: 1}}
			}
			p := New(tt.cfg).Attach(ft).(*part)
			err := p.BeforePrompt(ctx, thread.Prompt{Text: "hi"})
			if got := errString(err); got != tt.refuse {
				t.Errorf("refusal %q, want %q", got, tt.refuse)
			}
			checkCap(t, p, tt.capArg)
		})
	}
}

// checkCap launches p's process and checks its --max-budget-usd (""
// for none).
func checkCap(t *testing.T, p *part, capArg string) {
	t.Helper()
	var l thread.Launch
	p.BeforeLaunch(context.Background(), &l)
	want := []string(nil)
	if capArg != "" {
		want = []string{"--max-budget-usd", capArg}
	}
	if !slices.Equal(l.ExtraArgs, want) {
		t.Errorf("launch args %q, want %q", l.ExtraArgs, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRecap: an idle live process whose cap no longer matches what is left
// is stopped before the next prompt (it resumes with the new cap); a busy
// one, or one whose cap still holds, is left alone.
func TestRecap(t *testing.T) {
	tests := []struct {
		name string
		day  float64 // the channel's spend by the next prompt
		busy bool
		stop bool
	}{
		{name: "cap still right", day: 0},
		{name: "another thread spent", day: 3, stop: true},
		{name: "busy", day: 3, busy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ft := threadtest.New("main", "alice")
			ft.Records.DaySpent = map[string]float64{channel: 0}
			p := New(Config{ChannelDayUSD: 10}).Attach(ft).(*part)
			p.BeforeLaunch(ctx, &thread.Launch{})
			ft.Current.Live = true
			ft.Current.Queued = map[bool]int{true: 1}[tt.busy]
			ft.Records.DaySpent[channel] = tt.day
			if err := p.BeforePrompt(ctx, thread.Prompt{}); err != nil {
				t.Fatal(err)
			}
			if got := len(ft.Stops) == 1; got != tt.stop {
				t.Errorf("stopped %v, want %v", ft.Stops, tt.stop)
			}
		})
	}
}

// TestBudgetStopsTheTurn: a turn the CLI ended at its cap fails the turn,
// frees the process and says which budget, once per process; a spend that
// leaves the channel over its budget stops the channel's other turns.
func TestBudgetStopsTheTurn(t *testing.T) {
	ctx := context.Background()
	ft := threadtest.New("main", "alice")
	ft.Records.Spent = map[string]float64{key: 0}
	ft.Records.DaySpent = map[string]float64{channel: 0}
	p := New(Config{ThreadUSD: 1, ChannelDayUSD: 2}).Attach(ft).(*part)
	p.BeforeLaunch(ctx, &thread.Launch{})
	ft.Records.Spent[key], ft.Records.DaySpent[channel] = 1.5, 2.5
	for range 2 {
		e := &thread.TurnEnd{Result: &claudeproc.Result{Subtype: "error_max_budget_usd", IsError: true}, Cost: 1.5}
		p.AfterTurn(ctx, e)
		if !e.Release || e.Err == nil || !strings.HasPrefix(e.Err.Error(), "stopped: this thread's budget is spent") {
			t.Errorf("turn end %+v", e)
		}
	}
	if len(ft.Said) != 1 || !strings.HasPrefix(ft.Said[0], "!Stopped: this thread's budget is spent: $1.5000 of $1") {
		t.Errorf("said %q, want the stop once", ft.Said)
	}
	if sent := ft.TakeSent(); len(sent) != 2 || sent[0] != (overBudget{}) {
		t.Errorf("posted to the channel %v, want overBudget each time", sent)
	}
	// The other thread of the channel, mid-turn, is told and interrupted.
	synctest.Test(t, func(t *testing.T) {
		other := threadtest.New("other", "bob")
		other.Records = ft.Records
		other.Current = thread.State{Live: true, Turn: 1}
		op := New(Config{ThreadUSD: 1, ChannelDayUSD: 2}).Attach(other).(*part)
		op.Receive(ctx, overBudget{})
		if other.Interrupts != 1 || len(other.Said) != 1 || !strings.Contains(other.Said[0], "this channel's budget for today is spent") {
			t.Errorf("other thread: interrupts %d, said %q", other.Interrupts, other.Said)
		}
	})
}

func TestBudgetStatus(t *testing.T) {
	tests := []struct {
		name string
		cost bool
		want thread.Status
	}{
		{name: "status", want: thread.Status{ThreadSpent: 0.5, ThreadNote: " · budget $1: $0.5000 left",
			Spend: []string{"This channel today (UTC): $3.0000 · budget $2: spent"}}},
		{name: "cost", cost: true, want: thread.Status{Cost: true, ThreadSpent: 0.5, ChannelSpent: 3,
			ThreadNote: " · budget $1: $0.5000 left", ChannelNote: " · budget $2: spent", Tail: []string{"Each scheduled run: budget $0.25"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := threadtest.New("main", "alice")
			ft.Records.DaySpent = map[string]float64{channel: 3}
			p := New(Config{ThreadUSD: 1, ChannelDayUSD: 2, ScheduleRunUSD: 0.25}).Attach(ft).(*part)
			s := thread.Status{Cost: tt.cost, ThreadSpent: 0.5}
			if tt.cost {
				s.ChannelSpent = 3
			}
			p.Status(context.Background(), &s)
			if s.ThreadNote != tt.want.ThreadNote || s.ChannelNote != tt.want.ChannelNote ||
				!slices.Equal(s.Spend, tt.want.Spend) || !slices.Equal(s.Tail, tt.want.Tail) {
				t.Errorf("status %+v, want %+v", s, tt.want)
			}
		})
	}
}
