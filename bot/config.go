package bot

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// Config is the bot's configuration. The settings an operator gives carry
// their env tags (cmd/claudeops parses the environment into them; the
// README names each variable); the rest, tagged "-", are the parts cmd
// builds.
type Config struct {
	// ClaudeBin is the CLI to run; ClaudeEnv names extra variables it gets.
	ClaudeBin string   `env:"CLAUDEOPS_CLAUDE_BIN" envDefault:"claude"`
	ClaudeEnv []string `env:"CLAUDEOPS_CLAUDE_ENV"`
	// Env is the environment the child's is built from (default os.Environ()).
	Env []string `env:"-"`
	// Workdir is the default working directory of sessions.
	Workdir string `env:"CLAUDEOPS_WORKDIR" envDefault:"."`
	// Runner starts each session's claude (nil: a local child process).
	Runner claudeproc.Runner `env:"-"`
	// AllowedUsers may use the bot (ids or globs): the users setting at
	// the bot's scope (ConfigLayer), which a channel's users replace
	// there. Admins are the bot admins, admins of every channel.
	AllowedUsers []string `env:"CLAUDEOPS_ALLOWED_USERS"`
	Admins       []string `env:"CLAUDEOPS_ADMINS"`
	// ProtectedPaths are the bot's own files and directories (database,
	// WAL, crypto store, keys): no rule, grant or mode lets a tool touch
	// them.
	ProtectedPaths []string `env:"-"`
	// SkillsBase is where each session's repository skills are built for
	// the model to call (claudeproc.Options.SkillsBase): apart from every
	// working directory, among the bot's own places. "": none offered.
	SkillsBase  string        `env:"-"`
	MaxSessions int           `env:"CLAUDEOPS_MAX_SESSIONS" envDefault:"8"`
	IdleTimeout time.Duration `env:"CLAUDEOPS_IDLE_TIMEOUT" envDefault:"30m"`
	// ApprovalTimeout is how long an approval waits before it expires.
	ApprovalTimeout time.Duration `env:"CLAUDEOPS_APPROVAL_TIMEOUT" envDefault:"15m"`
	MaxLineBytes    int           `env:"CLAUDEOPS_MAX_LINE_BYTES" envDefault:"10485760"`
	// MailboxSize bounds the messages waiting for one thread's worker.
	MailboxSize int `env:"-"`
	// StopGrace bounds each step of stopping a claude process.
	StopGrace time.Duration    `env:"-"`
	Logger    *slog.Logger     `env:"-"`
	Now       func() time.Time `env:"-"`

	// MaxThreadsPerUser caps the live plus waiting sessions started by
	// one user's messages (the quota setting at the bot's scope, which a
	// channel's quota replaces there; its admins are exempt; scheduled
	// runs are not counted). 0 takes the default (3); negative means no cap. (The
	// variable's 0 means no cap: cmd makes it negative.)
	MaxThreadsPerUser int `env:"CLAUDEOPS_MAX_THREADS_PER_USER" envDefault:"3"`

	// Observer is told what sessions do, for metrics (observe.go);
	// default: nobody.
	Observer Observer `env:"-"`

	// Faults is told of the storage failing and working again (logged
	// once per cause); cmd shares it with readiness. Default: one of the
	// bot's own, on Logger.
	Faults *store.Faults `env:"-"`

	// Scopes answers which setting applies where (package settings): cmd
	// builds it from the configuration, the settings file and what was
	// set in chat. Default: one from AllowedUsers and Admins alone.
	Scopes *settings.Resolver `env:"-"`

	// Extensions are the features threads host (package thread), in the
	// order their hooks run: cmd lists limits, workspaces, schedules.
	Extensions []thread.Extension `env:"-"`
}

func (c *Config) defaults() {
	if c.ClaudeBin == "" {
		c.ClaudeBin = "claude"
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	if c.Workdir == "" {
		c.Workdir = "."
	}
	if dir, err := filepath.Abs(c.Workdir); err == nil {
		c.Workdir = dir // sessions' default directory, as the bot's start found it
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 8
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 30 * time.Minute
	}
	if c.ApprovalTimeout <= 0 {
		c.ApprovalTimeout = 15 * time.Minute
	}
	if c.MailboxSize <= 0 {
		c.MailboxSize = 64
	}
	if c.StopGrace <= 0 {
		c.StopGrace = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Faults == nil {
		c.Faults = &store.Faults{Log: c.Logger, Now: c.Now}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxThreadsPerUser == 0 {
		c.MaxThreadsPerUser = 3
	}
	if c.Scopes == nil {
		c.Scopes = settings.New(ConfigLayer(*c), c.Admins)
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
}

// ConfigLayer is what the bot's own configuration gives at the bot's
// scope, for settings.New: who may use the bot, and the per-user quota
// (which a channel's admins may only tighten).
func ConfigLayer(c Config) settings.Layer {
	var l settings.Layer
	quota := c.MaxThreadsPerUser
	switch {
	case quota == 0:
		quota = 3 // Config's default
	case quota < 0:
		quota = 0 // no cap
	}
	l.Put(settings.Quota, settings.Value{Text: strconv.Itoa(quota), Source: settings.Source{Scope: settings.Bot, Origin: settings.FromConfig, Var: "CLAUDEOPS_MAX_THREADS_PER_USER"}})
	if len(c.AllowedUsers) > 0 {
		users, _ := settings.Spec{Name: settings.Users, Kind: settings.KindUsers}.Parse(strings.Join(c.AllowedUsers, ","))
		l.Put(settings.Users, settings.Value{Text: users, Source: settings.Source{Scope: settings.Bot, Origin: settings.FromConfig, Var: "CLAUDEOPS_ALLOWED_USERS"}})
	}
	return l
}
