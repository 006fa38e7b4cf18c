package main

import (
	"io"
	"log/slog"
	"reflect"
	"slices"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/store"
)

// platform is one chat platform as the run sees it: its settings (its
// adapter's Config, whose env tags name the variables it reads) and what
// is particular in making its adapter. What every adapter gets (the bot,
// the metrics, /readyz, the run and the shutdown) the app does over the
// list of adapters it made (run.go).
type platform interface {
	// configured reports whether the operator set it up: a run then
	// takes it.
	configured() bool
	// checks lists what is wrong with its settings, each on its own (at
	// load, whether it runs or not).
	checks() []problem
	// startChecks lists what is wrong with its settings together, c's
	// other settings included (at start, when it runs).
	startChecks(c config) []problem
	// build makes its adapter, wired to w's parts. An error wrapped in
	// settingsError is the operator's to fix (exit 78).
	build(w wiring) (adapters.Adapter, error)
}

// platformsConfig holds every platform's settings. Adding a platform is
// its adapter's package, a type of this package (platform_*.go) and one
// field here.
type platformsConfig struct {
	// Console is the terminal's: run by `claudeops console`, or when no
	// platform is configured.
	Console consolePlatform
	Slack   slackPlatform
	Matrix  matrixPlatform
}

// list is every platform, in the order of p's fields: the order in
// which their adapters are made and shown.
func (p *platformsConfig) list() []platform { return fieldsAs[platform](p) }

// running are the platforms a run takes: the configured ones, or the
// console alone (for `claudeops console`, or when none is configured).
func (p *platformsConfig) running(consoleOnly bool) []platform {
	var out []platform
	if !consoleOnly {
		out = slices.DeleteFunc(p.list(), func(pl platform) bool { return !pl.configured() })
	}
	if len(out) == 0 {
		out = []platform{&p.Console}
	}
	return out
}

// anyConfigured reports whether a platform besides the console is set up.
func (p *platformsConfig) anyConfigured() bool {
	return slices.ContainsFunc(p.list(), platform.configured)
}

// wiring is what a platform's adapter is made with.
type wiring struct {
	cfg    config
	log    *slog.Logger
	st     *store.Store
	b      *bot.Bot // made; its Recover has not run
	stdin  io.Reader
	stdout io.Writer
}

// settingsError marks an error as the settings' fault.
type settingsError struct{ error }

func (e settingsError) Unwrap() error { return e.error }

// stateKeeper is a platform that keeps files of its own beside the
// database (Matrix: its crypto store and recovery key): they are the bot's
// state, kept apart from sessions and protected as the database is.
// databases are SQLite files, which have side files (-wal, -shm, -journal).
type stateKeeper interface {
	stateFiles(c config) (databases, files []string)
}

// platformFiles are the files every platform keeps beside the database,
// whether it runs or not (an earlier run's are still there).
func (c *config) platformFiles() (databases, files []string) {
	for _, p := range c.Platforms.list() {
		if k, ok := p.(stateKeeper); ok {
			d, f := k.stateFiles(*c)
			databases, files = append(databases, d...), append(files, f...)
		}
	}
	return databases, files
}

// botConfigurer is a platform that changes what the bot is made with (the
// console: its operator is allowed, and an admin).
type botConfigurer interface {
	configureBot(c *bot.Config)
}

// fieldsAs are the addresses of the exported fields of the struct *p that
// are a T, in order: the runners' and the platforms' lists, which so
// cannot miss one.
func fieldsAs[T any](p any) []T {
	v := reflect.ValueOf(p).Elem()
	var out []T
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if t, ok := v.Field(i).Addr().Interface().(T); ok {
			out = append(out, t)
		}
	}
	return out
}
