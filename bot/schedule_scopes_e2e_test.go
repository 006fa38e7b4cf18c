package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/settings"
)

// A scheduled run uses its channel's settings at run time, not those of
// when it was scheduled: the channel's budget.schedule_run is changed
// between two runs of one schedule, and the second runs under the new
// one (the CLI stops it at its one model request, the run is recorded
// failed saying which budget and where it comes from).
func TestConsoleScheduleUsesSettingsAtRunTime(t *testing.T) {
	t.Parallel()
	r := settings.New(settings.Layer{}, []string{console.OperatorID})
	w := settings.Where{Platform: "console", Channel: "console"}
	scope := settings.Scope{Level: settings.LevelChannel, Key: w.ChannelKey()}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r.SetChat(w, scope, settings.BudgetScheduleRun, "10", console.OperatorID, at)
	h := newHarness(t, script(nil), func(c *testConfig) { c.Scopes = r })
	stop := startScheduler(t, h)
	defer stop()

	h.say(`schedule add "0 3 * * *" nightly check`)
	id := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule run " + id)
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run + `\] claude: ok: .*nightly check$`)
	waitRun(t, h, id, "succeeded")

	r.SetChat(w, scope, settings.BudgetScheduleRun, "0.0001", console.OperatorID, at)
	n := h.requests()
	h.say("/thread main")
	h.say("schedule run " + id)
	run = h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run + `\] \* Stopped: this scheduled run's budget is spent: \$0\.\d{6} of \$0\.0001 \(channel console/console, set in chat by ` + console.OperatorID + ` on 2026-11-29 12:00 UTC\)\.$`)
	waitRun(t, h, id, "failed")
	runs, err := h.st.Runs(context.Background(), mustID(t, id), 1)
	if err != nil || len(runs) != 1 || !strings.Contains(runs[0].Error, "channel console/console") {
		t.Errorf("the second run: %+v (%v)", runs, err)
	}
	if got := h.requests() - n; got != 1 {
		t.Errorf("%d model requests for the second run, want 1", got)
	}
}
