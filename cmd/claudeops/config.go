package main

import (
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/claudeops/claudeops/scheduler"
)

// config is the process-wide configuration. Names are the contract of
// DESIGN.md ("Configuration"). Secrets are the fields tagged "unset"; each
// has a <NAME>_FILE twin in SecretFiles, and none stays in the process's
// environment (secrets.go).
type config struct {
	SlackBotToken      string        `env:"SLACK_BOT_TOKEN,unset"`
	SlackAppToken      string        `env:"SLACK_APP_TOKEN,unset"`
	SlackSigningSecret string        `env:"SLACK_SIGNING_SECRET,unset"`
	SlackAPIURL        string        `env:"SLACK_API_URL"`
	SlackAllowBots     bool          `env:"CLAUDEOPS_SLACK_ALLOW_BOTS"`
	SlackStreaming     bool          `env:"CLAUDEOPS_SLACK_STREAMING" envDefault:"false"`
	MatrixHomeserver   string        `env:"MATRIX_HOMESERVER"`
	MatrixUserID       string        `env:"MATRIX_USER_ID"`
	MatrixAccessToken  string        `env:"MATRIX_ACCESS_TOKEN,unset"`
	MatrixDeviceID     string        `env:"MATRIX_DEVICE_ID"`
	MatrixPassword     string        `env:"MATRIX_PASSWORD,unset"`
	MatrixEditInterval time.Duration `env:"CLAUDEOPS_MATRIX_EDIT_INTERVAL" envDefault:"1500ms"`
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
	// Per-user quotas (admins exempt); 0 means no cap.
	MaxThreadsPerUser   int `env:"CLAUDEOPS_MAX_THREADS_PER_USER" envDefault:"3"`
	MaxSchedulesPerUser int `env:"CLAUDEOPS_MAX_SCHEDULES_PER_USER" envDefault:"10"`
	// Scheduler holds the CLAUDEOPS_SCHEDULE_* settings.
	Scheduler scheduler.Config
	// Runner holds the CLAUDEOPS_RUNNER* settings.
	Runner runnerConfig
	// SecretFiles holds what the <NAME>_FILE variables' files contain.
	SecretFiles secretFiles
	// ConsoleTestHooks enables the console's `/as <user> <text>`, for tests
	// that act as someone other than the operator.
	ConsoleTestHooks bool `env:"CLAUDEOPS_CONSOLE_TEST_HOOKS"`
}

func loadConfig(environ []string) (config, error) {
	var c config
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	if err := env.ParseWithOptions(&c, env.Options{Environment: m}); err != nil {
		return c, explainEnvError(err)
	}
	var bad []string
	if c.MaxSessions < 1 {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_MAX_SESSIONS must be at least 1, got %d", c.MaxSessions))
	}
	if c.MaxLineBytes < 64<<10 {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_MAX_LINE_BYTES must be at least 65536, got %d", c.MaxLineBytes))
	}
	if c.MaxThreadsPerUser < 0 {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_MAX_THREADS_PER_USER must be 0 (no cap) or more, got %d", c.MaxThreadsPerUser))
	}
	if c.MaxSchedulesPerUser < 0 {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_MAX_SCHEDULES_PER_USER must be 0 (no cap) or more, got %d", c.MaxSchedulesPerUser))
	}
	switch {
	case c.Scheduler.MinInterval < 0:
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_SCHEDULE_MIN_INTERVAL must be 0 (no minimum) or more, got %s", c.Scheduler.MinInterval))
	case c.Scheduler.MinInterval == 0:
		c.Scheduler.MinInterval = -1 // the scheduler's "no minimum" (its 0 is the default)
	}
	bad = append(bad, c.Runner.validate()...)
	c.Runner.noteSecretFiles(m)
	bad = append(bad, c.readSecretFiles(m)...)
	bad = append(bad, c.placeState(m)...)
	if len(bad) > 0 {
		return c, errors.New(strings.Join(bad, "; "))
	}
	return c, nil
}

// perUserCap turns a per-user cap from the environment (0: none) into
// bot.Config's terms (0: the default; negative: none).
func perUserCap(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// explainEnvError names the variable behind each field that failed to
// parse: operators know CLAUDEOPS_IDLE_TIMEOUT, not IdleTimeout.
func explainEnvError(err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	var msgs []string
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			name := pe.Name
			if tag := envTag(reflect.TypeFor[config](), pe.Name); tag != "" {
				name = tag
			}
			msgs = append(msgs, fmt.Sprintf("%s: not a valid %s: %v", name, pe.Type, pe.Err))
			continue
		}
		msgs = append(msgs, e.Error())
	}
	return errors.New(strings.Join(msgs, "; "))
}

// envTag finds the variable name of a field, in nested structs too.
func envTag(t reflect.Type, field string) string {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == field {
			name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
			return name
		}
		if f.Type.Kind() == reflect.Struct {
			if name := envTag(f.Type, field); name != "" {
				return name
			}
		}
	}
	return ""
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
