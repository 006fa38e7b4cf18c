package bot

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/settings"
)

// A channel's budget from the settings applies in that channel only, and
// a channel admin's tightened budget stops a thread at the tighter amount:
// another channel's tiny budget does not limit the console's channel; the
// console channel's admin then tightens its thread budget under what one
// turn costs, and the live session's next turn is stopped by it (the model
// API sees that one request, and none after), the refusal saying where the
// budget comes from.
func TestConsoleChannelBudgetSetting(t *testing.T) {
	t.Parallel()
	r := settings.New(settings.Layer{}, []string{console.OperatorID})
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	set := func(channel string, n settings.Name, value, by string) {
		t.Helper()
		w := settings.Where{Platform: "console", Channel: channel}
		scope := settings.Scope{Level: settings.LevelChannel, Key: w.ChannelKey()}
		if err := r.CheckChat(w, scope, n, value, by); err != nil {
			t.Fatal(err)
		}
		r.SetChat(w, scope, n, value, by, at)
	}
	set("elsewhere", settings.BudgetThread, "0.0001", console.OperatorID)
	set("elsewhere", settings.BudgetChannelDay, "0.0001", console.OperatorID)
	set("console", settings.Admins, "bob", console.OperatorID)
	h := newHarness(t, script(nil), func(c *testConfig) { c.Scopes = r; c.Limits.ThreadUSD = 10 })

	for _, say := range []string{"hello", "again"} {
		h.say(say)
		h.expect(`^\[main\] claude: ok: .*` + say + `$`)
		h.expect(`^\[main\] — ✓`)
	}

	// Less than a turn costs is left: the CLI stops the next one.
	u, err := h.st.ThreadUsage(context.Background(), "console/console/main")
	if err != nil {
		t.Fatal(err)
	}
	set("console", settings.BudgetThread, strconv.FormatFloat(u.CostUSD+tinyBudget/2, 'f', -1, 64), "bob")
	n := h.requests()
	h.say("over it")
	h.expect(`^\[main\] \* Stopped: this thread's budget is spent: \$0\.\d{6} of \$0\.\d+ \(channel console/console, set in chat by bob on 2026-11-29 12:00 UTC\)\.$`)
	if got := h.requests() - n; got != 1 {
		t.Errorf("%d model requests for the turn under the tightened budget, want 1", got)
	}
	n = h.requests()
	h.say("more please")
	h.expect(`^\[main\] \* Not sent to Claude: this thread's budget is spent: .* \(channel console/console, set in chat by bob`)
	if got := h.requests(); got != n {
		t.Errorf("%d model requests after the refusal, want none", got-n)
	}
}
