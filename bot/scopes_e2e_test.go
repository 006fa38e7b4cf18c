package bot

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/bot/scopes"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// TestSettingsFromChat: `set`, `unset` and `settings` through the real bot
// on the console, with the database and its audit table as the oracle. A
// user who is no admin changes nothing; no argument reaches another
// channel, and `settings` shows none of its values; the operator's change
// is stored, audited with before and after, and after a restart (the
// stored values loaded, as cmd loads them at start) still applies.
func TestSettingsFromChat(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, script(nil), nil)
	other := store.ScopeSetting{Level: int(settings.LevelChannel), ScopeKey: "slack/C0OTHER001", Name: "instructions", Value: "SECRET-OTHER", SetBy: "U0SOMEONE"}
	if err := h.st.SaveScopeSetting(ctx, other); err != nil {
		t.Fatal(err)
	}
	load := func() {
		if err := scopes.LoadChat(ctx, h.st, h.b.cfg.Scopes); err != nil {
			t.Fatal(err)
		}
	}
	load()

	h.say("/as bob set model opus")
	h.expect(`Nothing changed: only the channel's admins set its model\.`)
	h.say("/as bob set --bot model opus")
	h.expect(`Nothing changed: only bot admins set model at bot\.`)
	h.say("set --channel slack/C0OTHER001 instructions leak")
	h.expect("Nothing changed: `--channel` is not an option")
	h.say("set slack/C0OTHER001 instructions leak")
	h.expect("Nothing changed: there is no setting `slack/C0OTHER001`")
	h.say("set mode bypassPermissions")
	h.expect(`Nothing changed: mode: one of default, acceptEdits, plan, got "bypassPermissions"\.`)
	h.say("set model opus")
	h.expect("model is `opus` at channel console/console. Sessions started from now on use it.")
	h.say("set instructions Allow all tools; Bash(*) is allowed.")
	h.expect("instructions is `Allow all tools; Bash\\(\\*\\) is allowed.`")
	from := len(h.out.Lines())
	h.say("/as bob settings")
	h.expect("• model: `opus` — channel console/console, set in chat by operator on ")
	h.expect(`• quota: `)
	h.absent(from, "SECRET|C0OTHER")

	rows, err := h.st.ScopeSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.ScopeKey+" "+r.Name+"="+r.Value+" by "+r.SetBy)
	}
	want := []string{"console/console instructions=Allow all tools; Bash(*) is allowed. by operator", "console/console model=opus by operator", "slack/C0OTHER001 instructions=SECRET-OTHER by U0SOMEONE"}
	if !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	if rules, err := h.st.Rules(ctx); err != nil || len(rules) != 0 {
		t.Errorf("rules after set instructions: %v, %v", rules, err)
	}
	es, err := h.st.AuditLog(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var audit []string // oldest first
	for _, e := range slices.Backward(es) {
		if strings.HasPrefix(e.Target, "set ") || strings.HasPrefix(e.Target, "model ") || strings.HasPrefix(e.Target, "instructions ") {
			audit = append(audit, e.UserID+" "+e.Action+" "+e.Target+" | "+e.Detail)
		}
	}
	for i, re := range []string{
		`^bob refused set model at channel console/console \| only the channel's admins set its model; value "opus"$`,
		`^bob refused set model at bot \| only bot admins set model at bot; value "opus"$`,
		`^operator set model at channel console/console \| before: "" \(the default\); after: "opus" \(channel console/console, set in chat by operator on .*\)$`,
		`^operator set instructions at channel console/console \| before: "" \(the default\); after: "Allow all tools; Bash\(\*\) is allowed\." `,
	} {
		if i >= len(audit) || !regexp.MustCompile(re).MatchString(audit[i]) {
			t.Errorf("audit %d: %q, want %s", i, audit, re)
		}
	}

	h.restart()
	load()
	h.say("settings")
	h.expect("• model: `opus` — channel console/console, set in chat by operator on ")
	h.say("unset model")
	h.expect("model has no value of its own at channel console/console now. Here model is none \\(the default\\). Sessions started from now on use what applies here now.")
	if rows, _ := h.st.ScopeSettings(ctx); len(rows) != 2 {
		t.Errorf("after unset, stored %+v", rows)
	}
}
