package bot

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tinyBudget is below what one turn costs with the fake model API (its
// usage is 10 input tokens and about a token per four characters out; the
// CLI prices them, a short answer comes to some $0.0002).
const tinyBudget = 0.0001

// requests is how many requests the fake model API has had.
func (h *harness) requests() int { return len(h.api.Requests()) }

// A thread's budget: the turn that crosses it is stopped by the CLI at the
// end of its model request (a tool it asked for never runs, nobody is
// asked about it), and the thread's next message is refused before it
// reaches Claude, saying which budget and how much was spent. Other
// threads have budgets of their own; status and cost show the spend
// against the budget.
func TestConsoleThreadBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(nil), func(c *testConfig) { c.Limits.ThreadUSD = tinyBudget })

	h.say("hello")
	h.expect(`^\[main\] claude: ok: .*hello$`)
	h.expect(`^\[main\] — ✗ Error: Reached maximum budget \(\$0\.0001\)`)
	h.expect(`^\[main\] \* Stopped: this thread's budget is spent: \$0\.\d{6} of \$0\.0001 \(CLAUDEOPS_BUDGET_THREAD_USD\)\.$`)
	n := h.requests()
	h.say("more please")
	h.expect(`^\[main\] \* Not sent to Claude: this thread's budget is spent: \$0\.\d{6} of \$0\.0001 \(CLAUDEOPS_BUDGET_THREAD_USD\)\.$`)
	h.say("status")
	h.expect(`^\[main\] \* Cost so far: \$0\.\d{4} over 1 turn · budget \$0\.0001: spent$`)
	h.say("cost")
	h.expect(`^\[main\] \* This thread: \$0\.\d{4} · 1 turn · \d+ input / \d+ output tokens · budget \$0\.0001: spent$`)
	if got := h.requests(); got != n {
		t.Errorf("%d model requests after the refusal, want none", got-n)
	}
	u, err := h.st.ThreadUsage(context.Background(), "console/console/main")
	if err != nil || u.CostUSD < tinyBudget || u.Turns != 1 {
		t.Errorf("main's usage %+v (%v): want one turn over the budget", u, err)
	}
	if live := h.b.LiveSessions(); live != 0 {
		t.Errorf("%d live sessions: the spent thread's process should be gone", live)
	}

	// Another thread has its own budget. Its first model request asks for
	// a command the CLI runs unasked (read-only) and crosses the budget:
	// the command never runs (no tool result goes back to the model, no
	// second request is made).
	h.say("/thread t2")
	from := h.cursor
	n = h.requests()
	h.say("run echo over-budget")
	h.expect(`^\[t2\] \* Stopped: this thread's budget is spent: \$0\.\d{6} of \$0\.0001 \(CLAUDEOPS_BUDGET_THREAD_USD\)\.$`)
	h.absent(from, `tool result`)
	if got := h.requests() - n; got != 1 {
		t.Errorf("%d model requests for t2's turn, want 1 (the one that crossed the budget)", got)
	}
	turns := threadTurns(t, h, "console/console/t2")
	if len(turns) != 1 || turns[0].ResultSubtype != "error_max_budget_usd" || turns[0].CostUSD <= tinyBudget || turns[0].OutputTokens == 0 {
		t.Errorf("t2's turn: %+v", turns)
	}
}

// A channel's budget for the day (UTC): a turn that crosses it stops the
// channel's other running turns, and refuses the channel's next messages,
// in any thread, until the day turns.
func TestConsoleChannelDayBudget(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	var skew atomic.Int64
	h := newHarness(t, script(hold), func(c *testConfig) {
		c.Limits.ChannelDayUSD = tinyBudget
		c.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})

	h.say("slow in main")
	h.api.WaitRequests(1, waitTimeout)
	h.say("/thread t2")
	h.say("hello from t2")
	start := h.cursor
	h.expect(`^\[t2\] claude: ok: .*hello from t2$`)
	h.expect(`^\[t2\] \* Stopped: this channel's budget for today is spent: \$0\.\d{6} of \$0\.0001 \(CLAUDEOPS_BUDGET_CHANNEL_DAY_USD\); it renews at 00:00 UTC\.$`)
	// main's turn, still waiting for its model answer, is stopped.
	h.cursor = start
	h.expect(`^\[main\] \* Stopped: this channel's budget for today is spent: `)
	// Cut while its answer streamed, the CLI may count what that answer
	// cost so far and report the turn over its cap instead.
	h.expect(`^\[main\] — (■ Stopped|✗ Error: Reached maximum budget)`)

	n := h.requests()
	h.say("/thread t3")
	h.say("hi from t3")
	h.expect(`^\[t3\] \* Not sent to Claude: this channel's budget for today is spent: \$0\.\d{6} of \$0\.0001 \(CLAUDEOPS_BUDGET_CHANNEL_DAY_USD\); it renews at 00:00 UTC\.$`)
	h.say("status")
	h.expect(`^\[t3\] \* This channel today \(UTC\): \$0\.\d{6} · budget \$0\.0001: spent$`)
	if got := h.requests(); got != n {
		t.Errorf("%d model requests after the refusal, want none", got-n)
	}
	// A scheduled run in the channel is refused the same way, and
	// recorded failed saying why.
	stop := startScheduler(t, h)
	defer stop()
	h.say(`schedule add "0 3 * * *" nightly check`)
	id := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule run " + id)
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run + `\] \* Not sent to Claude: this channel's budget for today is spent: `)
	waitRun(t, h, id, "failed")
	if runs, err := h.st.Runs(context.Background(), mustID(t, id), 1); err != nil || len(runs) != 1 || !strings.Contains(runs[0].Error, "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD") {
		t.Errorf("the refused run: %+v (%v)", runs, err)
	}
	if got := h.requests(); got != n {
		t.Errorf("%d model requests for the refused run, want none", got-n)
	}
	h.say("/thread t3")
	now := time.Now().Add(time.Duration(skew.Load())).UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC) // the budget's day
	if u, err := h.st.ChannelUsageSince(context.Background(), "console/console", day); err != nil || u.CostUSD < tinyBudget {
		t.Errorf("the channel's spend today %+v (%v): want it over the budget", u, err)
	}

	// The next day the channel may spend again.
	skew.Store(int64(24 * time.Hour))
	h.say("hi again tomorrow")
	h.expect(`^\[t3\] claude: ok: .*hi again tomorrow$`)
	if got := h.requests(); got != n+1 {
		t.Errorf("%d model requests the next day, want 1", got-n)
	}
}

// A scheduled run's budget stops the run: its one model request crosses
// it, the (read-only, unasked) command it asked for never runs, the run is
// recorded failed saying why, and people replying in the run's thread afterwards are not bound by
// it.
func TestConsoleScheduleRunBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(nil), func(c *testConfig) { c.Limits.ScheduleRunUSD = tinyBudget })
	stop := startScheduler(t, h)
	defer stop()

	h.say(`schedule add "0 3 * * *" run echo scheduled`)
	id := h.expect(`\* Schedule (\d+): `)[1]
	n := h.requests()
	h.say("schedule run " + id)
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run + `\] \* Stopped: this scheduled run's budget is spent: \$0\.\d{6} of \$0\.0001 \(CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD\)\.$`)
	waitRun(t, h, id, "failed")
	runs, err := h.st.Runs(context.Background(), mustID(t, id), 1)
	if err != nil || len(runs) != 1 || !strings.Contains(runs[0].Error, "CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD") || runs[0].CostUSD < tinyBudget {
		t.Errorf("the run: %+v (%v)", runs, err)
	}
	if got := h.requests() - n; got != 1 {
		t.Errorf("%d model requests for the run, want 1", got)
	}
	h.absent(0, `tool result`)
	h.say("/thread " + run)
	h.say("thanks anyway")
	h.expect(`^\[` + run + `\] claude: ok: .*thanks anyway$`)
	h.expect(`^\[` + run + `\] — ✓ `)
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not an id: %q", s)
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
