package main

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
)

// newHealth makes the endpoints' view of the built app: its adapters, the
// bot's sessions, the store, the runner's CLI.
func (a *app) newHealth(cfg config, runner claudeproc.Runner) *health {
	var conns []connAdapter
	if a.con != nil {
		conns = append(conns, a.con)
	}
	if a.sl != nil {
		conns = append(conns, a.sl)
	}
	if a.mx != nil {
		conns = append(conns, a.mx)
	}
	hc := healthConfig{
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
	return newHealth(hc)
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
func cliChecker(cfg config, runner claudeproc.Runner) func(context.Context) cliResult {
	if d, ok := runner.(imageRunner); ok {
		bin := cmp.Or(cfg.ClaudeBin, "claude")
		return func(ctx context.Context) cliResult { return imageCLI(ctx, d, bin) }
	}
	return func(ctx context.Context) cliResult {
		info, err := claudeproc.CheckVersion(ctx, cfg.ClaudeBin)
		return cliResult{info: info, err: err}
	}
}

// imageCLI is claudeproc.CheckVersion for the CLI in the docker runner's
// image, with the same levels and errors (checkImageCLI's policy).
func imageCLI(ctx context.Context, r imageRunner, bin string) cliResult {
	info := claudeproc.VersionInfo{Bin: bin + " (in the runner's image)"}
	raw, err := r.CLIVersion(ctx, bin)
	if err != nil {
		info.Level = claudeproc.CompatNotFound
		info.Message = fmt.Sprintf("claude CLI %s did not run: %v", info.Bin, err)
		return cliResult{info: info, err: fmt.Errorf("%w: %v", claudeproc.ErrNotFound, err)}
	}
	info.Raw = raw
	v, err := claudeproc.ParseVersion(raw)
	if err != nil {
		info.Level = claudeproc.CompatDegraded
		info.Message = fmt.Sprintf("claude CLI %s: cannot read its version (%v); continuing degraded", info.Bin, err)
		return cliResult{info: info}
	}
	info.Version, info.Level = v, claudeproc.Classify(v)
	if v.Compare(claudeproc.MinVersion) < 0 {
		info.Message = fmt.Sprintf("claude CLI %s %s is older than the minimum supported %s", info.Bin, v, claudeproc.MinVersion)
		return cliResult{info: info, err: fmt.Errorf("%w: %s < %s", claudeproc.ErrIncompatible, v, claudeproc.MinVersion)}
	}
	info.Message = fmt.Sprintf("claude CLI %s %s (tested with %s)", info.Bin, v, claudeproc.TestedVersion)
	return cliResult{info: info}
}
