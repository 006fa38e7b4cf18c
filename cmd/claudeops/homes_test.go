package main

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
)

// TestHomesAreTheBots: the local runner keeps a CLI home per thread in the
// state directory (beside the database without one), and every home base,
// the sandbox's too wherever CLAUDEOPS_SANDBOX_HOMES puts it, is among the
// bot's own files: no rule lets a tool touch it, no working directory may
// hold it.
func TestHomesAreTheBots(t *testing.T) {
	state, dbDir, elsewhere, work := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	tests := []struct {
		name         string
		env          []string
		local, homes string
	}{
		{"state directory", []string{"CLAUDEOPS_STATE_DIR=" + state},
			state + "/claude-homes", state + "/sandbox-homes"},
		{"database alone", []string{"CLAUDEOPS_DB=" + dbDir + "/bot.db"},
			dbDir + "/bot.claude-homes", dbDir + "/bot.sandbox-homes"},
		{"sandbox homes outside the state", []string{"CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_SANDBOX_HOMES=" + elsewhere + "/homes"},
			state + "/claude-homes", elsewhere + "/homes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(append(tt.env, "HOME="+t.TempDir(), "CLAUDEOPS_WORKDIR="+work, "CLAUDEOPS_RUNNER=local"))
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := buildRunner(t.Context(), c, slog.New(slog.DiscardHandler))
			if l, ok := r.(claudeproc.Local); err != nil || !ok || l.HomeBase != tt.local {
				t.Errorf("local runner %#v, %v; want its homes in %s", r, err, tt.local)
			}
			if got := sandbox(c).HomeBase; got != tt.homes {
				t.Errorf("sandbox homes %s, want %s", got, tt.homes)
			}
			own := ownFiles(c)
			for _, p := range []string{tt.local, tt.homes} {
				if !slices.Contains(own, p) {
					t.Errorf("%s is not among the bot's own files: %v", p, own)
				}
			}
		})
	}
}

// TestSandboxHomesApartFromWork: sandbox homes where sessions work stop
// the start (no session could start there: the homes are the bot's own).
func TestSandboxHomesApartFromWork(t *testing.T) {
	work, state := t.TempDir(), t.TempDir()
	for _, tt := range []struct {
		homes string
		bad   bool
	}{
		{work + "/homes", true},
		{work, true},
		{state + "/homes", false},
		{work + "-homes", false},
	} {
		c, err := loadConfig([]string{"HOME=" + t.TempDir(), "CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_STATE_DIR=" + state,
			"CLAUDEOPS_WORKDIR=" + work, "CLAUDEOPS_SANDBOX_HOMES=" + tt.homes})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range c.Runner.Sandbox.HostCheck(c.host(nil)) {
			got = append(got, p.Var+" "+p.Want)
		}
		if bad := slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "inside CLAUDEOPS_WORKDIR") }); bad != tt.bad {
			t.Errorf("homes %s: problems %q, want one about the working directory: %v", tt.homes, got, tt.bad)
		}
	}
}

// TestCredentialWarning: a start whose sessions will find no credentials
// says which variables give them some, whatever runner takes them from the
// bot's environment; a kubernetes runner's come from its Secret.
func TestCredentialWarning(t *testing.T) {
	tests := []struct {
		kind string
		env  map[string]string
		warn bool
	}{
		{"local", nil, true},
		{"local", map[string]string{"ANTHROPIC_API_KEY": ""}, true},
		{"local", map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "HOME": "/home/bot"}, true},
		{"local", map[string]string{"ANTHROPIC_API_KEY": "sk-x"}, false},
		{"local", map[string]string{"ANTHROPIC_AUTH_TOKEN": "t"}, false},
		{"local", map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-x"}, false},
		{"local", map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1"}, false},
		{"local", map[string]string{"CLAUDE_CODE_USE_VERTEX": "1"}, false},
		{"sandbox", nil, true},
		{"docker", nil, true},
		{"docker", map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": "x"}, false},
		{"kubernetes", nil, false},
	}
	for _, tt := range tests {
		var c config
		c.Runner.Kind = tt.kind
		msg := credentialWarning(c, tt.env)
		if (msg != "") != tt.warn {
			t.Errorf("%s %v: warning %q, want one: %v", tt.kind, tt.env, msg, tt.warn)
		}
		if msg == "" {
			continue
		}
		for _, name := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "claude setup-token", "CLAUDE_CODE_USE_BEDROCK"} {
			if !strings.Contains(msg, name) {
				t.Errorf("the warning does not name %s: %s", name, msg)
			}
		}
	}
}
