package main

import (
	"runtime/debug"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/bot/mcpservers"
	"github.com/claudeops/claudeops/scheduler"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/triggers"
)

// config is the process-wide configuration. Names are a contract,
// documented in docs/CONFIGURATION.md (configdoc_test.go holds it to the
// env tags). Secrets are the fields tagged "unset"; each
// has a <NAME>_FILE twin in SecretFiles, and none stays in the process's
// environment (secrets.go).
type config struct {
	// Platforms holds the chat platforms' settings, tagged in their
	// adapters' packages (platform.go).
	Platforms platformsConfig
	// StateDir holds the bot's own files (state.go): set, or derived when
	// DB is not set; "" after loading when nothing lives there.
	StateDir string `env:"CLAUDEOPS_STATE_DIR"`
	// DB defaults to claudeops.db in StateDir.
	DB        string `env:"CLAUDEOPS_DB"`
	HTTPAddr  string `env:"CLAUDEOPS_HTTP_ADDR"`
	LogLevel  string `env:"CLAUDEOPS_LOG_LEVEL" envDefault:"info"`
	LogFormat string `env:"CLAUDEOPS_LOG_FORMAT" envDefault:"text"`
	// Workspaces holds the clones and worktrees of bound repositories
	// (workspaces.go): set, or derived beside the XDG data home.
	Workspaces string `env:"CLAUDEOPS_WORKSPACES"`
	// Bot holds the bot's settings, tagged in package bot; the parts it
	// is made with are set in run.go.
	Bot bot.Config
	// Extensions holds the extensions' settings, tagged in their packages
	// (extensions.go).
	Extensions extensionsConfig
	// Scheduler holds the CLAUDEOPS_SCHEDULE_* settings.
	Scheduler scheduler.Config
	// Runner holds the CLAUDEOPS_RUNNER* settings.
	Runner runnerConfig
	// SecretFiles holds what the <NAME>_FILE variables' files contain.
	SecretFiles secretFiles
	// LogFile is where the log goes when the console shares one terminal
	// with it (logging.go); "" is claudeops.log in the state directory.
	LogFile string `env:"CLAUDEOPS_LOG_FILE"`
	// SettingsFile is the settings file (scopes.go, settingsfile.go);
	// settingsLayer and settingsSum are what it held at start.
	SettingsFile  string `env:"CLAUDEOPS_SETTINGS_FILE"`
	settingsLayer settings.Layer
	settingsSum   [32]byte
	// TriggersFile is the triggers file (triggers.go); triggers what it
	// held, checked.
	TriggersFile string `env:"CLAUDEOPS_TRIGGERS_FILE"`
	triggers     []triggers.Trigger
	// Forges binds repositories to their forge, ForgeTokenFile is the
	// forges' token (forges.go); forges what they gave, checked.
	Forges         []string `env:"CLAUDEOPS_FORGES"`
	ForgeTokenFile string   `env:"CLAUDEOPS_FORGE_TOKEN_FILE"`
	forges         forges
	// mcp is the operator's MCP servers and plugin directories, checked
	// (mcpservers.go).
	mcp *mcpservers.Catalog
	// raw is the environment it was parsed from: problems show values as
	// the operator wrote them (never a secret's: problem.line).
	raw map[string]string
}

// loadConfig parses the environment and checks what can be checked
// without the host: each setting (check.go), the secrets' files, the
// state's place and the runner in use. The error, a *configError, lists every
// problem at once; c is what could be parsed.
func loadConfig(environ []string) (config, error) {
	m := envMap(environ)
	c := config{raw: m}
	var bad []problem
	failed := map[string]bool{}
	if err := env.ParseWithOptions(&c, env.Options{Environment: m}); err != nil {
		bad, failed = parseProblems(err, m)
	}
	bad = append(bad, keepUnfailed(c.settingChecks(), failed)...)
	for _, p := range c.Platforms.list() {
		bad = append(bad, keepUnfailed(p.checks(), failed)...)
	}
	bad = append(bad, keepUnfailed(limitChecks(c.Extensions.Limits), failed)...)
	c.zeroIsNone()
	bad = append(bad, asProblems(c.readSecretFiles(m))...)
	bad = append(bad, asProblems(c.placeState(m))...)
	bad = append(bad, c.placeWorkspaces(m)...)
	bad = append(bad, c.mcpChecks()...)
	bad = append(bad, c.loadSettingsFile()...)
	bad = append(bad, c.loadTriggersFile()...)
	bad = append(bad, c.loadForges()...)
	bad = append(bad, c.reviewNeedsForge()...)
	bad = append(bad, keepUnfailed(c.Runner.check(c.host(nil)), failed)...)
	if len(bad) > 0 {
		return c, &configError{problems: bad, raw: m}
	}
	return c, nil
}

// envMap is environ ("K=V" entries) as a map; a later entry wins (as in
// exec.Cmd's Env).
func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// zeroIsNone gives the settings whose 0 means none (no minimum, no cap)
// the parts' word for it, a negative value: their 0 is the default.
func (c *config) zeroIsNone() {
	for _, n := range []*int{&c.Bot.MaxThreadsPerUser, &c.Extensions.Schedules.MaxPerUser} {
		if *n == 0 {
			*n = -1
		}
	}
	if c.Scheduler.MinInterval == 0 {
		c.Scheduler.MinInterval = -1
	}
}

// version is set at build time (-ldflags "-X main.version=v1.2.3").
var version = ""

func botVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if dirty {
				rev += "-dirty"
			}
			return "devel-" + rev
		}
	}
	return "devel"
}
