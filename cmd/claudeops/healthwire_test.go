package main

import (
	"slices"
	"testing"
)

// TestHealthSecrets: the endpoints are told every secret of the
// configuration and the database's path, as set and as opened, so that
// an error carrying one shows it redacted (health's TestReadyzShowsNoSecret).
func TestHealthSecrets(t *testing.T) {
	const bot, app, sign, token, pw = "xoxb-1111-bot", "xapp-2222-app", "sign-3333", "syt-4444", "hunter2"
	c := secretsOf(bot, app, sign, token, pw)
	c.DB = "state/claudeops.db"
	got := healthSecrets(c)
	for _, s := range []string{bot, app, sign, token, pw, "state/claudeops.db", absPath("state/claudeops.db")} {
		if !slices.Contains(got, s) {
			t.Errorf("%q is not among the values the endpoints hide: %q", s, got)
		}
	}
}
