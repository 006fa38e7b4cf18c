package claudeproc

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/claudeops/claudeops/internal/fspath"
)

// Each runner's configuration is one type (LocalSettings, SandboxSettings
// here, docker.Settings, kubernetes.Settings), read from the environment
// through its env tags, that checks itself, builds its runner and names
// the directories it owns. The composition root (cmd/claudeops) holds a
// list of them and picks one by Name (CLAUDEOPS_RUNNER); it tells them of
// the bot through a Host.

// Host is what a runner's settings are checked against and built with: the
// bot's places, its environment and its log.
type Host struct {
	// Instance names this bot among those sharing an engine or a
	// namespace: hex digits, the same at every start.
	Instance string
	// HomeBase is where a runner of the bot's own keeps the CLI homes it
	// calls name, absolute.
	HomeBase func(name string) string
	// Workdir is the sessions' default working directory; WorkDirs are all
	// the directories sessions work in, each with the variable that sets it.
	Workdir  string
	WorkDirs []Place
	// ClaudeBin is the CLI sessions run; ClaudeEnv names the variables
	// passed to it (CLAUDEOPS_CLAUDE_ENV: names, or prefixes ending in
	// "*"); Environ is the bot's environment.
	ClaudeBin string
	ClaudeEnv []string
	Environ   map[string]string
	// Private are the bot's own files and its secrets' files: no session
	// may see them.
	Private []string
	// Placeable says why the bot could not make dir or write in it ("" when
	// it can), changing nothing.
	Placeable func(dir string) string
	Logger    *slog.Logger
}

// Place is a directory and the variable that sets it.
type Place struct{ Var, Path string }

// Problem is one thing wrong with a runner's settings, said to the
// operator on one line: the variable at fault (Var), what is wrong or
// wanted (Want) and, for when the environment does not hold the variable,
// the value in effect (Value). With Var "" Want is the whole line.
type Problem struct{ Var, Value, Want string }

// LocalSettings are the local runner's (Local): the CLI a child process of
// the bot, with a config directory per thread among the bot's files. It
// has no settings of its own.
type LocalSettings struct{}

// Name is CLAUDEOPS_RUNNER's value for it.
func (LocalSettings) Name() string { return "local" }

// Check has nothing to check.
func (LocalSettings) Check(Host) []Problem { return nil }

// HostCheck has nothing to check: the homes lie among the bot's files,
// whose places the bot checks.
func (LocalSettings) HostCheck(Host) []Problem { return nil }

// Build makes the runner; the CLI's check is the bot's (its own binary).
func (s LocalSettings) Build(_ context.Context, h Host) (Runner, VersionInfo, error) {
	return Local{HomeBase: s.homes(h)}, VersionInfo{}, nil
}

// OwnDirs are the CLI homes, whichever runner is in use: an earlier run's
// still hold its threads' state.
func (s LocalSettings) OwnDirs(h Host, _ bool) []string { return []string{s.homes(h)} }

// ImageCLI: the CLI is the host's.
func (LocalSettings) ImageCLI() bool { return false }

// homes holds the CLI config directories, one per thread
// (CLAUDE_CONFIG_DIR; HOME stays the bot user's).
func (LocalSettings) homes(h Host) string { return absPath(h.HomeBase("claude-homes")) }

// SandboxSettings are the bubblewrap runner's (Sandbox).
type SandboxSettings struct {
	Bwrap string `env:"CLAUDEOPS_SANDBOX_BWRAP" envDefault:"bwrap"`
	// Homes holds a home per thread; "" is the host's sandbox-homes.
	Homes string `env:"CLAUDEOPS_SANDBOX_HOMES"`
	// Hide are more paths sessions must not see (an EnvironmentFile with
	// secrets, ~/.ssh), besides the host's private files.
	Hide []string `env:"CLAUDEOPS_SANDBOX_HIDE"`
}

// Name is CLAUDEOPS_RUNNER's value for it.
func (SandboxSettings) Name() string { return "sandbox" }

// Check has nothing to check without the host.
func (SandboxSettings) Check(Host) []Problem { return nil }

// HostCheck lists what the host lacks, changing nothing: bubblewrap, a
// place for the homes, apart from where sessions work (a working
// directory inside them the sandbox refuses itself).
func (s SandboxSettings) HostCheck(h Host) []Problem {
	var out []Problem
	if _, err := exec.LookPath(s.Bwrap); err != nil {
		out = append(out, Problem{Var: "CLAUDEOPS_SANDBOX_BWRAP", Value: s.Bwrap,
			Want: "not found: want the bubblewrap program (Debian: apt-get install bubblewrap)"})
	}
	homes := s.homes(h)
	if why := h.Placeable(homes); why != "" {
		out = append(out, Problem{Var: "CLAUDEOPS_SANDBOX_HOMES", Value: homes, Want: why})
	}
	if w := absPath(h.Workdir); fspath.Within(homes, w) {
		out = append(out, Problem{Var: "CLAUDEOPS_SANDBOX_HOMES", Value: homes,
			Want: fmt.Sprintf("lies inside CLAUDEOPS_WORKDIR %s: want a directory apart from where sessions work", w)})
	}
	return out
}

// Build makes the sandbox and checks that it can hold a session in the
// default working directory.
func (s SandboxSettings) Build(ctx context.Context, h Host) (Runner, VersionInfo, error) {
	sb := s.Sandbox(h)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := sb.Check(ctx, h.Workdir); err != nil {
		return nil, VersionInfo{}, fmt.Errorf("sandbox runner: %w", err)
	}
	return sb, VersionInfo{}, nil
}

// Works reports whether the sandbox can run on this host, changing
// nothing: Bwrap is found and can make its namespaces here (what Build
// checks, less the places). The bot's default runner is the sandbox when
// it works.
func (s SandboxSettings) Works(ctx context.Context) error {
	bwrap, err := exec.LookPath(s.Bwrap)
	if err != nil {
		return fmt.Errorf("find bubblewrap: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return namespacesWork(ctx, bwrap)
}

// Sandbox is the runner of s on h. It hides the host's private files,
// the bot user's own Claude Code credentials, and what Hide names.
func (s SandboxSettings) Sandbox(h Host) Sandbox {
	hide := append([]string{}, h.Private...)
	if home, err := os.UserHomeDir(); err == nil {
		hide = append(hide, filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"))
	}
	for _, p := range s.Hide {
		hide = append(hide, absPath(p))
	}
	return Sandbox{Bwrap: s.Bwrap, HomeBase: s.homes(h), Hide: hide}
}

// OwnDirs are the homes, whichever runner is in use: an earlier run's
// still hold its threads' state.
func (s SandboxSettings) OwnDirs(h Host, _ bool) []string { return []string{s.homes(h)} }

// ImageCLI: the CLI is the host's.
func (SandboxSettings) ImageCLI() bool { return false }

func (s SandboxSettings) homes(h Host) string {
	if s.Homes != "" {
		return absPath(s.Homes)
	}
	return absPath(h.HomeBase("sandbox-homes"))
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
