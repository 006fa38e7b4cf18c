package main

import (
	"runtime/debug"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/claudeops/claudeops/scheduler"
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
	DB              string        `env:"CLAUDEOPS_DB"`
	ClaudeBin       string        `env:"CLAUDEOPS_CLAUDE_BIN" envDefault:"claude"`
	ClaudeEnv       []string      `env:"CLAUDEOPS_CLAUDE_ENV"`
	Workdir         string        `env:"CLAUDEOPS_WORKDIR" envDefault:"."`
	HTTPAddr        string        `env:"CLAUDEOPS_HTTP_ADDR"`
	AllowedUsers    []string      `env:"CLAUDEOPS_ALLOWED_USERS"`
	Admins          []string      `env:"CLAUDEOPS_ADMINS"`
	MaxSessions     int           `env:"CLAUDEOPS_MAX_SESSIONS" envDefault:"8"`
	IdleTimeout     time.Duration `env:"CLAUDEOPS_IDLE_TIMEOUT" envDefault:"30m"`
	ApprovalTimeout time.Duration `env:"CLAUDEOPS_APPROVAL_TIMEOUT" envDefault:"15m"`
	MaxLineBytes    int           `env:"CLAUDEOPS_MAX_LINE_BYTES" envDefault:"10485760"`
	LogLevel        string        `env:"CLAUDEOPS_LOG_LEVEL" envDefault:"info"`
	LogFormat       string        `env:"CLAUDEOPS_LOG_FORMAT" envDefault:"text"`
	// Workspaces holds the clones and worktrees of bound repositories
	// (workspaces.go): set, or derived beside the XDG data home.
	Workspaces  string        `env:"CLAUDEOPS_WORKSPACES"`
	WorktreeTTL time.Duration `env:"CLAUDEOPS_WORKTREE_TTL" envDefault:"168h"`
	// Repos binds channels to repositories: "<channel key>=<path or URL>".
	Repos []string `env:"CLAUDEOPS_REPOS"`
	// Per-user quotas (admins exempt); 0 means no cap.
	MaxThreadsPerUser   int `env:"CLAUDEOPS_MAX_THREADS_PER_USER" envDefault:"3"`
	MaxSchedulesPerUser int `env:"CLAUDEOPS_MAX_SCHEDULES_PER_USER" envDefault:"10"`
	// Scheduler holds the CLAUDEOPS_SCHEDULE_* settings.
	Scheduler scheduler.Config
	// Limits holds the turn timeout and the spend budgets (limits.go).
	Limits limitsConfig
	// Runner holds the CLAUDEOPS_RUNNER* settings.
	Runner runnerConfig
	// SecretFiles holds what the <NAME>_FILE variables' files contain.
	SecretFiles secretFiles
	// LogFile is where the log goes when the console shares one terminal
	// with it (logging.go); "" is claudeops.log in the state directory.
	LogFile string `env:"CLAUDEOPS_LOG_FILE"`
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
	bad = append(bad, keepUnfailed(c.Limits.checks(), failed)...)
	if c.Scheduler.MinInterval == 0 {
		c.Scheduler.MinInterval = -1 // the scheduler's "no minimum" (its 0 is the default)
	}
	bad = append(bad, asProblems(c.readSecretFiles(m))...)
	bad = append(bad, asProblems(c.placeState(m))...)
	bad = append(bad, c.placeWorkspaces(m)...)
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

// perUserCap turns a per-user cap from the environment (0: none) into
// bot.Config's terms (0: the default; negative: none).
func perUserCap(n int) int {
	if n == 0 {
		return -1
	}
	return n
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
