package main

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/health"
)

// newHealth makes the endpoints' view of the built app: its adapters, the
// bot's sessions, the store, the runner's CLI.
func (a *app) newHealth(cfg config, runner claudeproc.Runner) *health.Health {
	var conns []health.Conn
	if a.con != nil {
		conns = append(conns, a.con)
	}
	if a.sl != nil {
		conns = append(conns, a.sl)
	}
	if a.mx != nil {
		conns = append(conns, a.mx)
	}
	hc := health.Config{
		Version:  botVersion(),
		Adapters: conns,
		Sessions: a.b,
		DB:       a.st,
		CheckCLI: cliChecker(cfg, runner),
		Secrets:  healthSecrets(cfg),
	}
	if cfg.Runner.Kind == "kubernetes" {
		// Each check is a Pod: an image's CLI changes with a deployment,
		// not by the minute, and a Pod may take a while to be scheduled.
		hc.CLIRecheck, hc.CLICheckLimit = time.Hour, 2*time.Minute
	}
	return health.New(hc)
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

// cliChecker checks the CLI sessions run: the configured one, or for the
// docker runner the image's.
func cliChecker(cfg config, runner claudeproc.Runner) func(context.Context) (claudeproc.VersionInfo, error) {
	if d, ok := runner.(imageRunner); ok {
		bin := cmp.Or(cfg.ClaudeBin, "claude")
		return func(ctx context.Context) (claudeproc.VersionInfo, error) { return imageCLI(ctx, d, bin) }
	}
	return func(ctx context.Context) (claudeproc.VersionInfo, error) {
		return claudeproc.CheckVersion(ctx, cfg.ClaudeBin)
	}
}

// imageCLI is claudeproc.CheckVersion for the CLI in the docker runner's
// image, with the same levels and errors (checkImageCLI's policy).
func imageCLI(ctx context.Context, r imageRunner, bin string) (claudeproc.VersionInfo, error) {
	info := claudeproc.VersionInfo{Bin: bin + " (in the runner's image)"}
	raw, err := r.CLIVersion(ctx, bin)
	if err != nil {
		info.Level = claudeproc.CompatNotFound
		info.Message = fmt.Sprintf("claude CLI %s did not run: %v", info.Bin, err)
		return info, fmt.Errorf("%w: %v", claudeproc.ErrNotFound, err)
	}
	info.Raw = raw
	v, err := claudeproc.ParseVersion(raw)
	if err != nil {
		info.Level = claudeproc.CompatDegraded
		info.Message = fmt.Sprintf("claude CLI %s: cannot read its version (%v); continuing degraded", info.Bin, err)
		return info, nil
	}
	info.Version, info.Level = v, claudeproc.Classify(v)
	if v.Compare(claudeproc.MinVersion) < 0 {
		info.Message = fmt.Sprintf("claude CLI %s %s is older than the minimum supported %s", info.Bin, v, claudeproc.MinVersion)
		return info, fmt.Errorf("%w: %s < %s", claudeproc.ErrIncompatible, v, claudeproc.MinVersion)
	}
	info.Message = fmt.Sprintf("claude CLI %s %s (tested with %s)", info.Bin, v, claudeproc.TestedVersion)
	return info, nil
}
