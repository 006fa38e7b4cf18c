package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
)

// runnerConfig picks where sessions' claude processes run
// (CLAUDEOPS_RUNNER) and how.
type runnerConfig struct {
	Kind string `env:"CLAUDEOPS_RUNNER" envDefault:"local"`
	// Sandbox holds the CLAUDEOPS_SANDBOX_* settings.
	Sandbox sandboxConfig
	// Docker holds the docker runner's CLAUDEOPS_RUNNER_* settings (the
	// kubernetes runner's image, limits and user too).
	Docker dockerConfig
	// Kubernetes holds the CLAUDEOPS_KUBERNETES_* settings.
	Kubernetes kubernetesConfig
	// secretFiles are the files named by the <NAME>_FILE variables (set by
	// noteSecretFiles): the sandbox hides them.
	secretFiles []string
}

// sandboxConfig is the bubblewrap runner's (claudeproc.Sandbox).
type sandboxConfig struct {
	Bwrap string `env:"CLAUDEOPS_SANDBOX_BWRAP" envDefault:"bwrap"`
	// Homes holds a home per thread; default: sandbox-homes in the state
	// directory, else beside the database.
	Homes string `env:"CLAUDEOPS_SANDBOX_HOMES"`
	// Hide are more paths sessions must not see (an EnvironmentFile with
	// secrets, ~/.ssh), besides the bot's state and secret files.
	Hide []string `env:"CLAUDEOPS_SANDBOX_HIDE"`
}

// validate lists what is wrong, all at once.
func (r runnerConfig) validate() []string {
	switch r.Kind {
	case "local", "sandbox":
		return nil
	case "docker":
		_, bad := r.Docker.runnerConfig("")
		return bad
	case "kubernetes":
		_, bad := r.kubernetesConfig("")
		return bad
	}
	return []string{fmt.Sprintf("CLAUDEOPS_RUNNER must be local, sandbox, docker or kubernetes, got %q", r.Kind)}
}

// noteSecretFiles records the files the secrets were read from (m is the
// raw environment).
func (r *runnerConfig) noteSecretFiles(m map[string]string) {
	for _, name := range secretNames() {
		if f := m[name]; strings.HasSuffix(name, fileSuffix) && f != "" {
			r.secretFiles = append(r.secretFiles, absPath(f))
		}
	}
}

// buildRunner makes the configured runner, and checks that sessions can
// run in it before the bot takes any message. For a runner whose CLI is
// an image's, it also returns that CLI's check, the health's first.
func buildRunner(ctx context.Context, cfg config, log *slog.Logger) (claudeproc.Runner, claudeproc.VersionInfo, error) {
	var none claudeproc.VersionInfo
	switch cfg.Runner.Kind {
	case "local":
		return claudeproc.Local{HomeBase: localHomes(cfg)}, none, nil
	case "sandbox":
		sb := sandbox(cfg)
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := sb.Check(ctx, cfg.Workdir); err != nil {
			return nil, none, fmt.Errorf("sandbox runner: %w", err)
		}
		return sb, none, nil
	case "docker":
		r, cli, err := dockerRunner(ctx, cfg, log)
		if err != nil {
			return nil, none, err
		}
		return r, cli, nil
	case "kubernetes":
		r, cli, err := kubernetesRunner(ctx, cfg, log)
		if err != nil {
			return nil, none, err
		}
		return r, cli, nil
	}
	return nil, none, fmt.Errorf("unknown runner %q", cfg.Runner.Kind)
}

// homeBase is where a runner of the bot's own keeps the CLI homes, one per
// thread: name in the state directory, else beside the database.
func homeBase(cfg config, name string) string {
	if cfg.StateDir != "" {
		return filepath.Join(cfg.StateDir, name)
	}
	return strings.TrimSuffix(cfg.DB, filepath.Ext(cfg.DB)) + "." + name
}

// localHomes holds the local runner's CLI config directories, one per
// thread (CLAUDE_CONFIG_DIR; HOME stays the bot user's).
func localHomes(cfg config) string { return absPath(homeBase(cfg, "claude-homes")) }

// sandboxHomes holds the sandbox's homes, one per thread
// (CLAUDEOPS_SANDBOX_HOMES).
func sandboxHomes(cfg config) string {
	if h := cfg.Runner.Sandbox.Homes; h != "" {
		return absPath(h)
	}
	return absPath(homeBase(cfg, "sandbox-homes"))
}

// sandbox is the bubblewrap runner of cfg. It hides the bot's state (the
// state directory as a whole when in use, else each file of it), the
// secrets' files, the bot user's own Claude Code credentials, and what
// CLAUDEOPS_SANDBOX_HIDE names.
func sandbox(cfg config) claudeproc.Sandbox {
	sc := cfg.Runner.Sandbox
	// The database's lock too: a sandboxed tool holding a flock on it past
	// the bot's death would keep the next bot from starting.
	hide := append(append(ownFiles(cfg), lockFiles(cfg)...), cfg.Runner.secretFiles...)
	if home, err := os.UserHomeDir(); err == nil {
		hide = append(hide, filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"))
	}
	for _, p := range sc.Hide {
		hide = append(hide, absPath(p))
	}
	return claudeproc.Sandbox{Bwrap: sc.Bwrap, HomeBase: sandboxHomes(cfg), Hide: hide}
}
