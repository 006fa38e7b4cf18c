package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	units "github.com/docker/go-units"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/claudeproc/docker"
)

// dockerConfig is the docker runner's (claudeproc/docker): a container per
// session from CLAUDEOPS_RUNNER_IMAGE.
type dockerConfig struct {
	Image   string  `env:"CLAUDEOPS_RUNNER_IMAGE"`
	Network string  `env:"CLAUDEOPS_RUNNER_NETWORK" envDefault:"bridge"`
	Memory  string  `env:"CLAUDEOPS_RUNNER_MEMORY" envDefault:"2g"`
	CPUs    float64 `env:"CLAUDEOPS_RUNNER_CPUS" envDefault:"2"`
	Pids    int64   `env:"CLAUDEOPS_RUNNER_PIDS" envDefault:"512"`
	// User is uid:gid; empty: the bot's own.
	User string `env:"CLAUDEOPS_RUNNER_USER"`
}

// runnerConfig returns the runner's configuration for a bot whose state is
// at statePath (it names the instance), and what is wrong with it.
func (d dockerConfig) runnerConfig(statePath string) (docker.Config, []string) {
	var bad []string
	mem, err := units.RAMInBytes(d.Memory)
	if err != nil {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_RUNNER_MEMORY %q: want a size such as 2g or 512m", d.Memory))
	}
	c := docker.Config{
		Image: d.Image, Network: d.Network, Memory: mem, CPUs: d.CPUs, Pids: d.Pids, User: d.User,
		Instance: dockerInstance(statePath),
	}
	for _, msg := range c.Check() {
		// Complaints start with the field's name: say the variable's.
		field, rest, _ := strings.Cut(msg, " ")
		if field != "instance" {
			msg = "CLAUDEOPS_RUNNER_" + strings.ToUpper(field) + " " + rest
		}
		bad = append(bad, msg)
	}
	return c, bad
}

// dockerInstance names a bot by its state's place: bots sharing an engine
// (or a namespace) keep apart by it.
func dockerInstance(statePath string) string {
	sum := sha256.Sum256([]byte(statePath))
	return hex.EncodeToString(sum[:6])
}

// statePlace is the bot's state directory, else its database.
func statePlace(cfg config) string {
	if cfg.StateDir != "" {
		return cfg.StateDir
	}
	return cfg.DB
}

// userRe is CLAUDEOPS_RUNNER_USER's form.
var userRe = regexp.MustCompile(`^([0-9]{1,10}):([0-9]{1,10})$`)

// dockerRunner makes the docker runner and checks the engine and the image
// before the bot takes any message; containers a crashed run left behind
// are removed.
func dockerRunner(ctx context.Context, cfg config, log *slog.Logger) (*docker.Runner, claudeproc.VersionInfo, error) {
	var cli claudeproc.VersionInfo
	dc, bad := cfg.Runner.Docker.runnerConfig(absPath(statePlace(cfg)))
	if len(bad) > 0 {
		return nil, cli, fmt.Errorf("docker runner: %s", strings.Join(bad, "; "))
	}
	dc.Logger = log
	r, err := docker.New(dc)
	if err != nil {
		return nil, cli, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := r.Prepare(ctx); err != nil {
		r.Close()
		return nil, cli, fmt.Errorf("docker runner: %w", err)
	}
	if cli, err = checkImageCLI(ctx, r, cmp.Or(cfg.ClaudeBin, "claude")); err != nil {
		r.Close()
		return nil, cli, fmt.Errorf("docker runner: %w", err)
	}
	return r, cli, nil
}

// imageRunner is a runner whose CLI is in an image: CLIVersion runs
// `bin --version` there and returns what it printed.
type imageRunner interface {
	CLIVersion(ctx context.Context, bin string) (string, error)
}

// checkImageCLI applies the version policy of checkCLI to the image's CLI
// (imageCLI's levels): missing or too old stops the bot, newer than tested
// warns. It returns the check, for /readyz to start from.
func checkImageCLI(ctx context.Context, r imageRunner, bin string) (claudeproc.VersionInfo, error) {
	info, err := imageCLI(ctx, r, bin)
	switch {
	case errors.Is(err, claudeproc.ErrNotFound):
		return info, fmt.Errorf("%s (CLAUDEOPS_CLAUDE_BIN names the CLI in the image)", info.Message)
	case err != nil:
		return info, fmt.Errorf("claude CLI %s in the image is older than the minimum supported %s", info.Version, claudeproc.MinVersion)
	case info.Level == claudeproc.CompatDegraded:
		slog.Warn("claude CLI in the image: cannot read its version; continuing degraded", "printed", info.Raw)
	case info.Level == claudeproc.CompatLikely:
		slog.Warn("claude CLI in the image is newer than the tested one; it may have protocol changes", "version", info.Version.String(), "tested", claudeproc.TestedVersion.String())
	default:
		slog.Info("claude CLI in the image", "version", info.Version.String(), "tested", claudeproc.TestedVersion.String())
	}
	return info, nil
}
