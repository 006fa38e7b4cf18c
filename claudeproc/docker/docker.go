package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/claudeops/claudeops/claudeproc"
)

// Defaults of Config.
const (
	DefaultNetwork = "bridge"
	DefaultMemory  = 2 << 30 // bytes
	DefaultCPUs    = 2.0
	DefaultPids    = 512
	// Home is HOME inside the container; the CLI's state is Home/.claude.
	Home = "/home/claude"
)

// Labels put on every container and volume of the runner.
const (
	LabelInstance = "claudeops.instance"
	LabelChannel  = "claudeops.channel" // sha256 of the channel key, hex, 16 chars
	LabelThread   = "claudeops.thread"  // the same of the thread key
)

// Config says how sessions' containers are made.
type Config struct {
	// Image holds the CLI (Spec.Bin is resolved in it) and the tools the
	// repository needs. It must be on the engine already: nothing is pulled.
	Image string
	// Network is the container's network mode: "bridge" (default), "none",
	// "host" (shares the host's network, loopback included), or the name
	// of a network the operator made.
	Network string
	// Memory (bytes), CPUs and Pids limit each container; 0 means the
	// default.
	Memory int64
	CPUs   float64
	Pids   int64
	// User is "uid:gid" (numbers) to run the CLI as; "" is the bot's own,
	// so that what the CLI writes in the working directory is the bot's.
	User string
	// Instance names this bot in labels and volume names, so that bots
	// sharing an engine never share state: letters, digits, '_', '.', '-'.
	Instance string
	// Host is the engine's address; "" takes DOCKER_HOST, else the
	// default socket.
	Host   string
	Logger *slog.Logger
}

// Compiled at first use, not at init: counted repetitions make large
// programs, paid by every start of a build that links this package
// (docs/PERFORMANCE.md, "How much memory does the bot hold?").
var (
	instanceRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$`) })
	networkRe  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	userRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{1,10}):([0-9]{1,10})$`) })
)

// Check lists what is wrong with c, all at once (its zero fields are
// defaults, but for Image and Instance). Each complaint starts with the
// field's name in lower case.
func (c Config) Check() []string {
	var bad []string
	if c.Image == "" {
		bad = append(bad, "image is required")
	}
	if !instanceRe().MatchString(c.Instance) {
		bad = append(bad, fmt.Sprintf("instance %q: want 1-64 letters, digits, '_', '.', '-'", c.Instance))
	}
	// A "container:<id>" mode would join another container's namespace
	// (the bot's own, say): only plain network names.
	if c.Network != "" && !networkRe.MatchString(c.Network) {
		bad = append(bad, fmt.Sprintf("network %q: want bridge, none, host or a network's name", c.Network))
	}
	if c.User != "" && !userRe().MatchString(c.User) {
		bad = append(bad, fmt.Sprintf("user %q: want uid:gid, numbers", c.User))
	}
	if c.Memory < 0 || (c.Memory > 0 && c.Memory < 64<<20) {
		bad = append(bad, fmt.Sprintf("memory %d: want at least 64 MiB", c.Memory))
	}
	if c.CPUs < 0 {
		bad = append(bad, fmt.Sprintf("cpus %g: want more than 0", c.CPUs))
	}
	if c.Pids < 0 || (c.Pids > 0 && c.Pids < 32) {
		bad = append(bad, fmt.Sprintf("pids %d: want at least 32", c.Pids))
	}
	return bad
}

// Runner starts sessions' CLIs in containers. Safe for concurrent use.
type Runner struct {
	cfg      Config
	uid, gid int
	cli      *client.Client
	log      *slog.Logger

	volMu sync.Mutex // one volume set-up at a time: a new volume is chowned before use

	imgMu   sync.Mutex
	checked map[string]bool // channels' images found fit (image.go)
}

var _ claudeproc.ConfigPasser = (*Runner)(nil)

// PassesMCPConfig implements claudeproc.ConfigPasser: the launcher gives
// the CLI the configuration the runner writes on its stdin first.
func (r *Runner) PassesMCPConfig() bool { return true }

// New makes a runner for cfg. It does no I/O: Prepare checks the engine.
func New(cfg Config) (*Runner, error) {
	if bad := cfg.Check(); len(bad) > 0 {
		return nil, fmt.Errorf("docker runner: %s", strings.Join(bad, "; "))
	}
	if cfg.Network == "" {
		cfg.Network = DefaultNetwork
	}
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = DefaultCPUs
	}
	if cfg.Pids == 0 {
		cfg.Pids = DefaultPids
	}
	r := &Runner{cfg: cfg, uid: os.Getuid(), gid: os.Getgid(), log: cfg.Logger}
	if m := userRe().FindStringSubmatch(cfg.User); m != nil {
		r.uid, _ = strconv.Atoi(m[1])
		r.gid, _ = strconv.Atoi(m[2])
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	opts := []client.Opt{client.FromEnv}
	if cfg.Host != "" {
		opts = append(opts, client.WithHost(cfg.Host))
	}
	// The API version is negotiated with the engine on the first request.
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker runner: make the engine client: %w", err)
	}
	r.cli = cli
	return r, nil
}

// Client is the runner's engine client, for callers that inspect what it
// made.
func (r *Runner) Client() *client.Client { return r.cli }

// Close releases the engine client.
func (r *Runner) Close() error { return r.cli.Close() }

// Prepare checks that the engine answers and has the image, and removes
// containers this instance left behind (a bot that crashed) and the
// per-channel volumes of an earlier version: call it once at start, before
// any session.
func (r *Runner) Prepare(ctx context.Context) error {
	ping, err := r.cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
	if err != nil {
		return fmt.Errorf("reach the Docker engine at %s: %w", r.cli.DaemonHost(), err)
	}
	if _, err := r.cli.ImageInspect(ctx, r.cfg.Image); err != nil {
		return fmt.Errorf("find image %s on the Docker engine (it is never pulled; build or pull it first): %w", r.cfg.Image, err)
	}
	left, err := r.cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", LabelInstance+"="+r.cfg.Instance),
	})
	if err != nil {
		return fmt.Errorf("list containers left behind: %w", err)
	}
	for _, c := range left.Items {
		if err := r.remove(ctx, c.ID); err != nil {
			return fmt.Errorf("remove container %s left behind: %w", shortID(c.ID), err)
		}
	}
	vols, err := r.removeChannelVolumes(ctx)
	if err != nil {
		return err
	}
	r.log.Info("docker runner ready", "engine", r.cli.DaemonHost(), "api", ping.APIVersion,
		"image", r.cfg.Image, "network", r.cfg.Network, "removed_leftovers", len(left.Items), "removed_channel_volumes", vols)
	return nil
}

// Hash is how session keys appear in labels and volume names.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// VolumeName is the volume holding the CLI's state of s's thread
// (claudeproc.Session.HomeKey).
func (r *Runner) VolumeName(s claudeproc.Session) string {
	return "claudeops-" + r.cfg.Instance + "-" + Hash(s.HomeKey())
}

// Start implements claudeproc.Runner: it creates the container, attaches
// to its stdio, starts it, and copies between the attach stream and spec's
// files, which it closes once the stream ends.
func (r *Runner) Start(ctx context.Context, spec claudeproc.Spec) (_ claudeproc.Handle, err error) {
	files := []*os.File{spec.Stdin, spec.Stdout, spec.Stderr, spec.MCPConfig}
	defer func() {
		if err != nil {
			closeFiles(files...)
		}
	}()
	if spec.Dir == "" {
		return nil, errors.New("docker runner: a session needs a working directory")
	}
	// Read now: the pipe's writer ends once it is read.
	var first []byte
	if spec.MCPConfig != nil {
		if first, err = claudeproc.LauncherLine(spec); err != nil {
			return nil, fmt.Errorf("docker runner: %w", err)
		}
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("docker runner: working directory %q: %w", spec.Dir, err)
	}
	extra, err := claudeproc.NestMounts(spec.Mounts, dir)
	if err != nil {
		return nil, fmt.Errorf("docker runner: %w", err)
	}
	image, err := r.image(ctx, spec)
	if err != nil {
		return nil, err
	}
	vol := r.VolumeName(spec.Session)
	if err := r.ensureVolume(ctx, vol, spec.Session); err != nil {
		return nil, err
	}
	cfg, host := r.containerConfig(spec, image, dir, vol)
	host.Mounts = append(host.Mounts, r.extraMounts(extra)...)
	created, err := r.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:   "claudeops-" + r.cfg.Instance + "-" + Hash(spec.Session.Thread) + "-" + randomHex(4),
		Config: cfg, HostConfig: host,
	})
	if err != nil {
		return nil, fmt.Errorf("create container from %s: %w", image, err)
	}
	h, err := r.attachAndStart(ctx, created.ID, spec, first)
	if err != nil {
		if rerr := r.remove(context.WithoutCancel(ctx), created.ID); rerr != nil {
			r.log.Warn("docker runner: remove container after a failed start", "container", shortID(created.ID), "err", rerr)
		}
		return nil, err
	}
	return h, nil
}

// attachAndStart attaches to the container and starts it; first, when
// set, is the launcher's line, written before the CLI's input.
func (r *Runner) attachAndStart(ctx context.Context, id string, spec claudeproc.Spec, first []byte) (*handle, error) {
	// Wait is set up before the start (ContainerWait returns once the
	// engine has it), so that no exit can come first. It outlives ctx: the
	// session does.
	waitCtx, cancelWait := context.WithCancel(context.Background())
	wait := r.cli.ContainerWait(waitCtx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	abandonWait := func() { abandon(wait, cancelWait) }
	att, err := r.cli.ContainerAttach(ctx, id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		abandonWait()
		return nil, fmt.Errorf("attach to container %s: %w", shortID(id), err)
	}
	if _, err := r.cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		att.Close()
		abandonWait()
		return nil, fmt.Errorf("start container %s (%s): %w", shortID(id), spec.Bin, err)
	}
	h := &handle{r: r, id: id, wait: wait, cancelWait: cancelWait, att: att.HijackedResponse, stdin: spec.Stdin, outDone: make(chan struct{})}
	go h.copyIn(first, spec.Stdin)
	go h.copyOut(spec.Stdout, spec.Stderr)
	return h, nil
}

// abandon ends a wait that is no longer wanted. One of its channels always
// delivers, and the result's sender would block forever if not read.
func abandon(w client.ContainerWaitResult, cancel context.CancelFunc) {
	cancel()
	select {
	case <-w.Result:
	case <-w.Error:
	}
}

// containerConfig is the container of one session.
func (r *Runner) containerConfig(spec claudeproc.Spec, image, dir, vol string) (*container.Config, *container.HostConfig) {
	labels := map[string]string{
		LabelInstance: r.cfg.Instance,
		LabelChannel:  Hash(spec.Session.Channel),
		LabelThread:   Hash(spec.Session.Thread),
	}
	// The image's entrypoint, if any, does not come between.
	entry := []string{spec.Bin}
	if spec.MCPConfig != nil {
		// The operator's MCP servers come on the first line of stdin,
		// never in the container's record (claudeproc.ImageLauncher).
		entry = []string{"/bin/sh", "-c", claudeproc.ImageLauncher, spec.Bin}
	}
	cfg := &container.Config{
		Image:      image,
		User:       fmt.Sprintf("%d:%d", r.uid, r.gid),
		Entrypoint: entry,
		Cmd:        spec.Args,
		Env:        ContainerEnv(spec.Env),
		WorkingDir: dir,
		Labels:     labels,
		// stdin stays open while attached; once our copy ends (the bot
		// closed the CLI's input) the CLI reads EOF, as a local one would.
		AttachStdin: true, AttachStdout: true, AttachStderr: true,
		OpenStdin: true, StdinOnce: true,
	}
	pids := r.cfg.Pids
	init := true // reaps the tools the CLI starts; forwards signals to it
	host := &container.HostConfig{
		AutoRemove:  true,
		NetworkMode: container.NetworkMode(r.cfg.Network),
		Init:        &init,
		CapDrop:     []string{"ALL"},
		SecurityOpt: []string{"no-new-privileges"},
		// The output is the conversation: no copy of it on the engine's disk.
		LogConfig: container.LogConfig{Type: "none"},
		Resources: container.Resources{
			Memory:     r.cfg.Memory,
			MemorySwap: r.cfg.Memory, // no swap beyond the limit
			NanoCPUs:   int64(r.cfg.CPUs * 1e9),
			PidsLimit:  &pids,
		},
		Mounts: []mount.Mount{
			{Type: mount.TypeBind, Source: dir, Target: dir},
			{Type: mount.TypeVolume, Source: vol, Target: path.Join(Home, ".claude")},
		},
		// HOME is the user's whatever the image holds at that path.
		Tmpfs: map[string]string{Home: fmt.Sprintf("rw,nosuid,nodev,mode=0700,uid=%d,gid=%d", r.uid, r.gid)},
	}
	return cfg, host
}

// extraMounts are spec's Mounts as the engine takes them: a bind at its
// own path, read-only or not, or a tmpfs (the container's alone, gone
// with it) for an empty one, read-only but for one holding other mounts,
// whose mount points the engine makes in it, and for a scratch one,
// writable. The engine mounts parents first.
func (r *Runner) extraMounts(ms []claudeproc.Mount) []mount.Mount {
	out := make([]mount.Mount, 0, len(ms))
	for i, m := range ms {
		switch m.Access {
		case claudeproc.Empty, claudeproc.Scratch:
			out = append(out, mount.Mount{Type: mount.TypeTmpfs, Target: m.Path,
				ReadOnly:     m.Access == claudeproc.Empty && !claudeproc.HoldsOthers(ms, i),
				TmpfsOptions: &mount.TmpfsOptions{SizeBytes: tmpfsSize(m.Access), Mode: 0o755}})
		default:
			out = append(out, mount.Mount{Type: mount.TypeBind, Source: m.Path, Target: m.Path,
				ReadOnly: m.Access == claudeproc.ReadOnly})
		}
	}
	return out
}

// tmpfsSize bounds an empty mount (it holds mount points only) and a
// scratch one (reflogs, say).
func tmpfsSize(a claudeproc.Access) int64 {
	if a == claudeproc.Scratch {
		return 64 << 20
	}
	return 1 << 20
}

// hostPathEnv are variables that name places on the bot's host: in the
// container they would name nothing, or something else.
var hostPathEnv = []string{"PATH", "HOME", "TMPDIR", "CLAUDE_CONFIG_DIR", "SHELL", "PWD"}

// ContainerEnv is the CLI's environment in a container: env without the
// variables naming host paths (PATH comes from the image), and HOME and
// CLAUDE_CONFIG_DIR set to the container's, so that all of the CLI's state
// is on the thread's volume.
func ContainerEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(hostPathEnv, name) {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+Home, "CLAUDE_CONFIG_DIR="+path.Join(Home, ".claude"))
}
