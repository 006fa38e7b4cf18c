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
// when it was scheduled: the channel's model and budget.schedule_run are
// changed between two runs of one schedule (added in a thread whose
// session ran under the channel's first model), and the second runs under
// the new ones (the model API is asked with the new model; the CLI stops
// the run at its one model request, recorded failed saying which budget
// and where it comes from).
func TestConsoleScheduleUsesSettingsAtRunTime(t *testing.T) {
	t.Parallel()
	r := settings.New(settings.Layer{}, []string{console.OperatorID})
	w := settings.Where{Platform: "console", Channel: "console"}
	scope := settings.Scope{Level: settings.LevelChannel, Key: w.ChannelKey()}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const firstModel, newModel = "claude-sonnet-4-5", "claude-haiku-4-5"
	r.SetChat(w, scope, settings.BudgetScheduleRun, "10", console.OperatorID, at)
	r.SetChat(w, scope, settings.Model, firstModel, console.OperatorID, at)
	h := newHarness(t, script(nil), func(c *testConfig) { c.Scopes = r })
	stop := startScheduler(t, h)
	defer stop()
	h.say("hello")
	h.expect(`^\[main\] — ✓`)

	h.say(`schedule add "0 3 * * *" nightly check`)
	id := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule run " + id)
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run + `\] claude: ok: .*nightly check$`)
	waitRun(t, h, id, "succeeded")
	checkModels(t, h, 0, firstModel)

	r.SetChat(w, scope, settings.BudgetScheduleRun, "0.000001", console.OperatorID, at)
	r.SetChat(w, scope, settings.Model, newModel, console.OperatorID, at)
	n := h.requests()
	h.say("/thread main")
	h.say("schedule run " + id)
	run = h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run + `\] \* Stopped: this scheduled run's budget is spent: \$0\.\d{6} of \$0\.000001 \(channel console/console, set in chat by ` + console.OperatorID + ` on 2026-11-29 12:00 UTC\)\.$`)
	waitRun(t, h, id, "failed")
	runs, err := h.st.Runs(context.Background(), mustID(t, id), 1)
	if err != nil || len(runs) != 1 || !strings.Contains(runs[0].Error, "channel console/console") {
		t.Errorf("the second run: %+v (%v)", runs, err)
	}
	if got := h.requests() - n; got != 1 {
		t.Errorf("%d model requests for the second run, want 1", got)
	}
	checkModels(t, h, n, newModel)
}

// checkModels: the model API's requests from the from'th on that carry a
// run's prompt asked for model.
func checkModels(t *testing.T, h *harness, from int, model string) {
	t.Helper()
	seen := 0
	for _, req := range h.api.Requests()[from:] {
		if strings.Contains(req.LastUserText(), "nightly check") {
			seen++
			if req.Model != model {
				t.Errorf("a run's request asked for %q, want the channel's %q at run time", req.Model, model)
			}
		}
	}
	if seen == 0 {
		t.Errorf("no run's request from the %dth on", from)
	}
}
