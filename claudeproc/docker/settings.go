package docker

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	units "github.com/docker/go-units"

	"github.com/claudeops/claudeops/claudeproc"
)

// Settings are the docker runner's configuration as the operator gives it
// (CLAUDEOPS_RUNNER=docker): a container per session from
// CLAUDEOPS_RUNNER_IMAGE. The kubernetes runner reads the image, limits and
// user from the same variables.
type Settings struct {
	Image   string  `env:"CLAUDEOPS_RUNNER_IMAGE"`
	Network string  `env:"CLAUDEOPS_RUNNER_NETWORK" envDefault:"bridge"`
	Memory  string  `env:"CLAUDEOPS_RUNNER_MEMORY" envDefault:"2g"`
	CPUs    float64 `env:"CLAUDEOPS_RUNNER_CPUS" envDefault:"2"`
	Pids    int64   `env:"CLAUDEOPS_RUNNER_PIDS" envDefault:"512"`
	// User is uid:gid; empty: the bot's own.
	User string `env:"CLAUDEOPS_RUNNER_USER"`
}

// Name is CLAUDEOPS_RUNNER's value for it.
func (Settings) Name() string { return "docker" }

// Config is the runner's configuration for the bot named instance, and
// what is wrong with it, each line naming the variable at fault.
func (s Settings) Config(instance string) (Config, []string) {
	var bad []string
	mem, err := units.RAMInBytes(s.Memory)
	if err != nil {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_RUNNER_MEMORY %q: want a size such as 2g or 512m", s.Memory))
	}
	c := Config{Image: s.Image, Network: s.Network, Memory: mem, CPUs: s.CPUs, Pids: s.Pids, User: s.User, Instance: instance}
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

// Check lists what is wrong with the settings, all at once. A limit set to
// 0, which Config.Check would take for its default, is a mistake.
func (s Settings) Check(h claudeproc.Host) []claudeproc.Problem {
	var out []claudeproc.Problem
	if s.CPUs == 0 {
		out = append(out, claudeproc.Problem{Var: "CLAUDEOPS_RUNNER_CPUS", Want: "want a number of CPUs above 0, such as 2 or 1.5"})
	}
	if s.Pids == 0 {
		out = append(out, claudeproc.Problem{Var: "CLAUDEOPS_RUNNER_PIDS", Want: "want a whole number, at least 32"})
	}
	if n, err := units.RAMInBytes(s.Memory); err == nil && n == 0 {
		out = append(out, claudeproc.Problem{Var: "CLAUDEOPS_RUNNER_MEMORY", Want: "want a size of at least 64m, such as 2g"})
	}
	_, bad := s.Config(h.Instance)
	for _, l := range bad {
		out = append(out, claudeproc.Problem{Want: l})
	}
	return out
}

// HostCheck has nothing to check: Build asks the engine.
func (Settings) HostCheck(claudeproc.Host) []claudeproc.Problem { return nil }

// Build makes the runner and checks the engine and the image before the
// bot takes any message; containers a crashed run left behind are
// removed. It returns the image's CLI check.
func (s Settings) Build(ctx context.Context, h claudeproc.Host) (claudeproc.Runner, claudeproc.VersionInfo, error) {
	var cli claudeproc.VersionInfo
	dc, bad := s.Config(h.Instance)
	if len(bad) > 0 {
		return nil, cli, fmt.Errorf("docker runner: %s", strings.Join(bad, "; "))
	}
	dc.Logger = h.Logger
	r, err := New(dc)
	if err != nil {
		return nil, cli, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := r.Prepare(ctx); err != nil {
		r.Close()
		return nil, cli, fmt.Errorf("docker runner: %w", err)
	}
	if cli, err = claudeproc.StartImageCLI(ctx, r, cmp.Or(h.ClaudeBin, "claude"), h.Logger); err != nil {
		r.Close()
		return nil, cli, fmt.Errorf("docker runner: %w", err)
	}
	return r, cli, nil
}

// OwnDirs: its homes are volumes, not directories of the host.
func (Settings) OwnDirs(claudeproc.Host, bool) []string { return nil }

// ImageCLI: the CLI is the image's.
func (Settings) ImageCLI() bool { return true }

// SharesHostLoopback: only the host network gives a container the host's
// loopback (an operator's http MCP server there, say).
func (s Settings) SharesHostLoopback() bool { return s.Network == "host" }
