package bot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/scheduler"
	"github.com/claudeops/claudeops/store"
)

// A scheduled run's parked request notifies the schedule's creator (a
// mention in the run's thread, naming its deadline) and is denied at its
// own deadline: the approval timeout, or the run's end when that comes
// first. Denied at the approval timeout, the run goes on to its end.
func TestConsoleParkedRequestNotifiesCreator(t *testing.T) {
	tests := []struct {
		name     string
		approval time.Duration
		timeout  string        // the schedule's --timeout
		deadline time.Duration // the request's, from when it is asked: the first of the two
		then     string
		status   string   // the run's record
		states   []string // the approval's final state, one of
	}{
		{"the approval timeout comes first", 4 * time.Second, "10m", 4 * time.Second, `it is denied and the run goes on`,
			"succeeded", []string{"expired"}},
		// The request and the run end at the same moment: the prompt is
		// closed by whichever the bot handles first.
		{"the run's end comes first", time.Hour, "6s", 6 * time.Second, `it is denied as the run's time is up`,
			"timed_out", []string{"expired", "cancelled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The bot, its approvals' expiry and the run's timeout go by a
			// clock that stands until the test moves it: the deadlines pass
			// once the prompt is up, however long a loaded machine takes to
			// start claude (the run is started by hand: no cron firing,
			// which goes by the runtime's clock, is awaited).
			clk := testkit.NewClock(time.Now())
			h := newHarness(t, script(nil), func(c *testConfig) { c.ApprovalTimeout, c.Now = tt.approval, clk.Now })
			stop := startSchedulerWith(t, h, scheduler.Config{Now: clk.Now, Timers: clk})
			defer stop()

			h.say(`/as bob schedule add "0 3 * * *" --park --timeout ` + tt.timeout + ` run touch parked.txt`)
			id := h.expect(`\* Schedule (\d+): `)[1]
			h.say("/as bob schedule run " + id)
			m := h.expect(`^\[(run-\w+)\] \? approval (\w+): Bash wants to run`)
			run, approval := m[1], m[2]
			h.expect(`^\[` + run + `\] \* @bob: The scheduled run of #` + id + ` waits for your decision on prompt #1 \(Bash\)\. Unless someone decides within ` + tt.deadline.String() + `, ` + tt.then + `\.$`)
			clk.Advance(tt.deadline)
			if tt.status == "succeeded" {
				h.expect(`^\[` + run + `\] ! approval ` + approval + `: Expired: nobody decided in time; denied\.$`)
				h.expect(`^\[` + run + `\] \* Bash was denied: nobody decided by the deadline\. The scheduled run of #` + id + ` goes on without it\.$`)
				h.expect(`^\[` + run + `\] claude: tool result: Nobody decided this in time`)
			}
			waitRun(t, h, id, tt.status)
			// The run's record and the prompt's are written apart (the run
			// ends as the worker closes the prompt): the prompt's may follow.
			var a store.Approval
			var ok bool
			var err error
			testkit.WaitFor(t, waitTimeout, "the parked approval's record", func() bool {
				a, ok, err = h.st.GetApproval(context.Background(), approval)
				return err != nil || !ok || slices.Contains(tt.states, a.State)
			})
			if err != nil || !ok || !slices.Contains(tt.states, a.State) {
				t.Errorf("the parked approval: %+v %v %v; want a state in %v", a, ok, err, tt.states)
			}
			if d := a.ExpiresAt.Sub(a.CreatedAt); d <= 0 || d > tt.deadline {
				t.Errorf("the parked approval's deadline is %s after it was asked", d)
			}
			if _, err := os.Stat(filepath.Join(h.workdir, "parked.txt")); !os.IsNotExist(err) {
				t.Errorf("the denied command ran: %v", err)
			}
		})
	}
}
