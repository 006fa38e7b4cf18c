package bot

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
)

// Config is the bot's configuration; cmd fills it from the environment.
type Config struct {
	// ClaudeBin is the CLI to run; ClaudeEnv names extra variables it gets.
	ClaudeBin string
	ClaudeEnv []string
	// Env is the environment the child's is built from (default os.Environ()).
	Env []string
	// Workdir is the default working directory of sessions.
	Workdir string
	// Runner starts each session's claude (nil: a local child process).
	Runner claudeproc.Runner
	// AllowedUsers may use the bot (ids or globs); Admins may also decide
	// every approval and change channel settings.
	AllowedUsers []string
	Admins       []string
	// ProtectedPaths are the bot's own files and directories (database,
	// WAL, crypto store, keys): no rule, grant or mode lets a tool touch
	// them.
	ProtectedPaths []string
	MaxSessions    int
	IdleTimeout    time.Duration
	// ApprovalTimeout is how long an approval waits before it expires.
	ApprovalTimeout time.Duration
	MaxLineBytes    int
	// MailboxSize bounds the messages waiting for one thread's worker.
	MailboxSize int
	// StopGrace bounds each step of stopping a claude process.
	StopGrace time.Duration
	Logger    *slog.Logger
	Now       func() time.Time

	// MaxThreadsPerUser caps the live plus waiting sessions started by
	// one user's messages (admins are exempt; scheduled runs are not
	// counted). 0 takes the default (3); negative means no cap.
	MaxThreadsPerUser int

	// Observer is told what sessions do, for metrics (observe.go);
	// default: nobody.
	Observer Observer

	// Extensions are the features threads host (package thread), in the
	// order their hooks run: cmd lists limits, workspaces, schedules.
	Extensions []thread.Extension
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
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxThreadsPerUser == 0 {
		c.MaxThreadsPerUser = 3
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
}
