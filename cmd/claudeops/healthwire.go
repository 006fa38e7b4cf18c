package main

import (
	"cmp"
	"context"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/health"
)

// newHealth makes the endpoints' view of the built app: its adapters, the
// bot's sessions, the store, the runner's CLI.
func (a *app) newHealth(cfg config, runner claudeproc.Runner) *health.Health {
	var conns []health.Conn
	for _, ad := range a.adapters {
		if c, ok := ad.(health.Conn); ok {
			conns = append(conns, c)
		}
	}
	hc := health.Config{
		Version:  botVersion(),
		Adapters: conns,
		Sessions: a.b,
		DB:       a.st,
		// The start examined the file (dbcheck.go): sound, so far.
		Integrity: a.st.CheckIntegrity,
		CheckCLI:  cliChecker(cfg, runner),
		Secrets:   healthSecrets(cfg),
		Runner:    health.Runner{Name: cfg.Runner.Kind, Why: cfg.Runner.why},
	}
	if cfg.SettingsFile != "" {
		hc.SettingsFile = a.settings.report
	}
	if r, ok := cfg.Runner.inUse().(cliRechecker); ok {
		hc.CLIRecheck, hc.CLICheckLimit = r.CLIRecheck()
	}
	h := health.New(hc)
	h.SeedIntegrity(nil)
	return h
}

// cliRechecker is a runner whose CLI check is costly (kubernetes: a Pod):
// CLIRecheck says how often readiness checks it again, and how long one
// check may take.
type cliRechecker interface {
	CLIRecheck() (every, limit time.Duration)
}

// healthSecrets are the values the endpoints never show: every secret of
// the configuration, and the database's path (as set and as opened).
func healthSecrets(cfg config) []string {
	var out []string
	for _, v := range secretVars(&cfg) {
		out = append(out, v.String())
	}
	if cfg.DB != "" {
		out = append(out, cfg.DB, absPath(cfg.DB))
	}
	return out
}

// cliChecker checks the CLI sessions run: the configured one, or for a
// runner whose CLI is an image's the image's.
func cliChecker(cfg config, runner claudeproc.Runner) func(context.Context) (claudeproc.VersionInfo, error) {
	if r, ok := runner.(claudeproc.ImageCLI); ok {
		bin := cmp.Or(cfg.Bot.ClaudeBin, "claude")
		return func(ctx context.Context) (claudeproc.VersionInfo, error) {
			return claudeproc.CheckImageVersion(ctx, r, bin)
		}
	}
	return func(ctx context.Context) (claudeproc.VersionInfo, error) {
		return claudeproc.CheckVersion(ctx, cfg.Bot.ClaudeBin)
	}
}
