package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/claudeops/claudeops/claudeproc"
)

// runnerKind is one runner's configuration, read from the environment by
// its env tags (claudeproc.LocalSettings, docker.Settings, …). The one
// whose Name CLAUDEOPS_RUNNER gives is in use; the others' settings are
// read too (a value that does not parse is said at once), and their
// directories stay the bot's.
type runnerKind interface {
	// Name is CLAUDEOPS_RUNNER's value that picks it.
	Name() string
	// Check lists what is wrong with the settings on h, all at once,
	// changing nothing (at load, for the runner in use).
	Check(h claudeproc.Host) []claudeproc.Problem
	// HostCheck lists what the host lacks for the runner: programs,
	// places (at start, for the runner in use; it changes nothing).
	HostCheck(h claudeproc.Host) []claudeproc.Problem
	// Build makes the runner and checks that sessions can run in it, and
	// for a CLI in an image returns that CLI's check.
	Build(ctx context.Context, h claudeproc.Host) (claudeproc.Runner, claudeproc.VersionInfo, error)
	// OwnDirs are the directories it keeps that are the bot's own; inUse
	// says whether it is the runner in use.
	OwnDirs(h claudeproc.Host, inUse bool) []string
	// ImageCLI reports whether the CLI sessions run is an image's, which
	// Build checks, rather than the host's CLAUDEOPS_CLAUDE_BIN.
	ImageCLI() bool
}

// runnerConfig picks where sessions' claude processes run
// (CLAUDEOPS_RUNNER) and holds every runner's settings. Adding a runner is
// one field here.
type runnerConfig struct {
	// Kind is the runner's Name; "" until choose settles the default.
	Kind       string `env:"CLAUDEOPS_RUNNER"`
	Local      claudeproc.LocalSettings
	Sandbox    claudeproc.SandboxSettings
	Docker     dockerRunner     // docker.Settings, unless -tags nodocker
	Kubernetes kubernetesRunner // kubernetes.Settings, unless -tags nokubernetes
	// why says how Kind was chosen (choose), for the log and /readyz.
	why string
}

// choose settles the runner at start: the one CLAUDEOPS_RUNNER names,
// else the sandbox when bubblewrap works on this host, else local. Only a
// start asks bubblewrap: the other commands need no runner. warning is
// for the operator when the default fell back to local: sessions then
// see everything the bot's user can.
func (r *runnerConfig) choose(ctx context.Context) (warning string) {
	if r.Kind != "" {
		r.why = "set by CLAUDEOPS_RUNNER"
		return ""
	}
	err := r.Sandbox.Works(ctx)
	if err == nil {
		r.Kind, r.why = r.Sandbox.Name(), "the default: bubblewrap works on this host"
		return ""
	}
	r.Kind, r.why = r.Local.Name(), "the default without a working bubblewrap ("+err.Error()+")"
	return "sessions run with the local runner, not sandboxed: bubblewrap does not work here (" + err.Error() + "). " +
		"An approved command runs as the bot's user and can read and change everything that user can. " +
		"For the sandbox, install bubblewrap (Debian: apt-get install bubblewrap) where the bot may make user namespaces; " +
		"or set CLAUDEOPS_RUNNER=local to choose the local runner knowingly and silence this"
}

// kinds are the runners, in the order of r's fields.
func (r *runnerConfig) kinds() []runnerKind { return fieldsAs[runnerKind](r) }

// inUse is the runner CLAUDEOPS_RUNNER names; nil when it names none.
func (r *runnerConfig) inUse() runnerKind {
	for _, k := range r.kinds() {
		if k.Name() == r.Kind {
			return k
		}
	}
	return nil
}

// check lists what is wrong with the runner in use on h; the default,
// chosen at start, has nothing to check before (neither local nor the
// sandbox checks its settings without the host).
func (r *runnerConfig) check(h claudeproc.Host) []problem {
	k := r.inUse()
	switch {
	case r.Kind == "":
		return nil
	case k == nil:
		var names []string
		for _, k := range r.kinds() {
			names = append(names, k.Name())
		}
		last := len(names) - 1
		return []problem{{want: fmt.Sprintf("CLAUDEOPS_RUNNER must be %s or %s, got %q", strings.Join(names[:last], ", "), names[last], r.Kind)}}
	}
	return fromRunner(k.Check(h))
}

// fromRunner makes a runner's problems the configuration's.
func fromRunner(ps []claudeproc.Problem) []problem {
	out := make([]problem, len(ps))
	for i, p := range ps {
		out[i] = problem{name: p.Var, value: p.Value, want: p.Want}
	}
	return out
}

// host is what the runners are told of the bot: its places, its
// environment and log (nil: none yet). Private is left out here: it holds
// the runners' own directories (ownFiles), which they name from this host.
func (c *config) host(log *slog.Logger) claudeproc.Host {
	dirs := []claudeproc.Place{{Var: "CLAUDEOPS_WORKDIR", Path: c.Bot.Workdir}}
	if c.Workspaces != "" {
		dirs = append(dirs, claudeproc.Place{Var: "CLAUDEOPS_WORKSPACES", Path: c.Workspaces})
	}
	return claudeproc.Host{
		Instance:  instanceName(absPath(statePlace(*c))),
		HomeBase:  func(name string) string { return homeBase(*c, name) },
		Workdir:   c.Bot.Workdir,
		WorkDirs:  dirs,
		ClaudeBin: c.Bot.ClaudeBin,
		ClaudeEnv: c.Bot.ClaudeEnv,
		Environ:   c.raw,
		Placeable: func(dir string) string { return placeableDir("", dir, dir).want },
		Logger:    log,
	}
}

// runnerHost is host with the bot's private files: its own files, the
// database's lock (a sandboxed tool holding a flock on it past the bot's
// death would keep the next bot from starting) and the secrets' files.
func (c *config) runnerHost(log *slog.Logger) claudeproc.Host {
	h := c.host(log)
	h.Private = slices.Concat(ownFiles(*c), lockFiles(*c), secretFilePaths(c.raw))
	return h
}

// buildRunner makes the runner in use, and checks that sessions can run
// in it before the bot takes any message. For a runner whose CLI is an
// image's, it also returns that CLI's check, the health's first.
func buildRunner(ctx context.Context, cfg config, log *slog.Logger) (claudeproc.Runner, claudeproc.VersionInfo, error) {
	k := cfg.Runner.inUse()
	if k == nil {
		return nil, claudeproc.VersionInfo{}, fmt.Errorf("unknown runner %q", cfg.Runner.Kind)
	}
	return k.Build(ctx, cfg.runnerHost(log))
}

// secretFilePaths are the files the secrets were read from (m is the raw
// environment), absolute.
func secretFilePaths(m map[string]string) []string {
	var out []string
	for _, name := range secretNames() {
		if f := m[name]; strings.HasSuffix(name, fileSuffix) && f != "" {
			out = append(out, absPath(f))
		}
	}
	return out
}

// homeBase is where a runner of the bot's own keeps the CLI homes, one per
// thread: name in the state directory, else beside the database.
func homeBase(cfg config, name string) string {
	if cfg.StateDir != "" {
		return filepath.Join(cfg.StateDir, name)
	}
	return strings.TrimSuffix(cfg.DB, filepath.Ext(cfg.DB)) + "." + name
}

// instanceName names a bot by its state's place: bots sharing an engine
// (or a namespace) keep apart by it.
func instanceName(statePath string) string {
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
