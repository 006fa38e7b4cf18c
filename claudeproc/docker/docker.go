// Package docker is the `docker` runner: each session's Claude Code CLI runs
// in a container of its own, started through the Docker Engine API.
//
// What a container gets: the operator's image (the CLI and the tools the
// repository needs), the session's working directory bind-mounted at the
// same path, the CLI's state (~/.claude) on a volume per channel so that
// sessions resume across containers, a home directory on tmpfs, memory, CPU
// and pids limits, no capabilities, no new privileges. What it does not get:
// the bot's environment beyond Spec.Env (no chat secrets, no DOCKER_HOST),
// any other file of the bot's, the Docker socket, the bot's processes. The
// container is removed when the CLI ends, and its output is not logged by
// the engine (it is the conversation). stdio is attached through the API.
//
// The engine must run on the bot's host: the working directory is mounted
// by its host path.
package docker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
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

var (
	instanceRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$`)
	networkRe  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	userRe     = regexp.MustCompile(`^([0-9]{1,10}):([0-9]{1,10})$`)
)

// Check lists what is wrong with c, all at once (its zero fields are
// defaults, but for Image and Instance). Each complaint starts with the
// field's name in lower case.
func (c Config) Check() []string {
	var bad []string
	if c.Image == "" {
		bad = append(bad, "image is required")
	}
	if !instanceRe.MatchString(c.Instance) {
		bad = append(bad, fmt.Sprintf("instance %q: want 1-64 letters, digits, '_', '.', '-'", c.Instance))
	}
	// A "container:<id>" mode would join another container's namespace
	// (the bot's own, say): only plain network names.
	if c.Network != "" && !networkRe.MatchString(c.Network) {
		bad = append(bad, fmt.Sprintf("network %q: want bridge, none, host or a network's name", c.Network))
	}
	if c.User != "" && !userRe.MatchString(c.User) {
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
}

var _ claudeproc.Runner = (*Runner)(nil)

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
	if m := userRe.FindStringSubmatch(cfg.User); m != nil {
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
// containers this instance left behind (a bot that crashed): call it once
// at start, before any session.
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
	r.log.Info("docker runner ready", "engine", r.cli.DaemonHost(), "api", ping.APIVersion,
		"image", r.cfg.Image, "network", r.cfg.Network, "removed_leftovers", len(left.Items))
	return nil
}

// Hash is how session keys appear in labels and volume names.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// VolumeName is the volume holding the CLI's state for a channel.
func (r *Runner) VolumeName(channel string) string {
	return "claudeops-" + r.cfg.Instance + "-" + Hash(channel)
}

// Start implements claudeproc.Runner: it creates the container, attaches
// to its stdio, starts it, and copies between the attach stream and spec's
// files, which it closes once the stream ends.
func (r *Runner) Start(ctx context.Context, spec claudeproc.Spec) (_ claudeproc.Handle, err error) {
	files := []*os.File{spec.Stdin, spec.Stdout, spec.Stderr}
	defer func() {
		if err != nil {
			closeFiles(files...)
		}
	}()
	if spec.Dir == "" {
		return nil, errors.New("docker runner: a session needs a working directory")
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("docker runner: working directory %q: %w", spec.Dir, err)
	}
	vol := r.VolumeName(spec.Session.Channel)
	if err := r.ensureVolume(ctx, vol, spec.Session.Channel); err != nil {
		return nil, err
	}
	cfg, host := r.containerConfig(spec, dir, vol)
	created, err := r.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:   "claudeops-" + r.cfg.Instance + "-" + Hash(spec.Session.Thread) + "-" + randomHex(4),
		Config: cfg, HostConfig: host,
	})
	if err != nil {
		return nil, fmt.Errorf("create container from %s: %w", r.cfg.Image, err)
	}
	h, err := r.attachAndStart(ctx, created.ID, spec)
	if err != nil {
		if rerr := r.remove(context.WithoutCancel(ctx), created.ID); rerr != nil {
			r.log.Warn("docker runner: remove container after a failed start", "container", shortID(created.ID), "err", rerr)
		}
		return nil, err
	}
	return h, nil
}

func (r *Runner) attachAndStart(ctx context.Context, id string, spec claudeproc.Spec) (*handle, error) {
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
		return nil, fmt.Errorf("start container %s (%s in %s): %w", shortID(id), spec.Bin, r.cfg.Image, err)
	}
	h := &handle{r: r, id: id, wait: wait, cancelWait: cancelWait, att: att.HijackedResponse, stdin: spec.Stdin, outDone: make(chan struct{})}
	go h.copyIn(spec.Stdin)
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
func (r *Runner) containerConfig(spec claudeproc.Spec, dir, vol string) (*container.Config, *container.HostConfig) {
	labels := map[string]string{
		LabelInstance: r.cfg.Instance,
		LabelChannel:  Hash(spec.Session.Channel),
		LabelThread:   Hash(spec.Session.Thread),
	}
	cfg := &container.Config{
		Image: r.cfg.Image,
		User:  fmt.Sprintf("%d:%d", r.uid, r.gid),
		// The image's entrypoint, if any, does not come between.
		Entrypoint: []string{spec.Bin},
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

// hostPathEnv are variables that name places on the bot's host: in the
// container they would name nothing, or something else.
var hostPathEnv = []string{"PATH", "HOME", "TMPDIR", "CLAUDE_CONFIG_DIR", "SHELL", "PWD"}

// ContainerEnv is the CLI's environment in a container: env without the
// variables naming host paths (PATH comes from the image), and HOME and
// CLAUDE_CONFIG_DIR set to the container's, so that all of the CLI's state
// is on the channel's volume.
func ContainerEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !contains(hostPathEnv, name) {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+Home, "CLAUDE_CONFIG_DIR="+path.Join(Home, ".claude"))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ensureVolume makes the channel's volume if it is not there, owned by the
// user the CLI runs as.
func (r *Runner) ensureVolume(ctx context.Context, name, channel string) error {
	r.volMu.Lock()
	defer r.volMu.Unlock()
	if _, err := r.cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{}); err == nil {
		return nil
	} else if !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("inspect volume %s: %w", name, err)
	}
	_, err := r.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Labels: map[string]string{
		LabelInstance: r.cfg.Instance, LabelChannel: Hash(channel),
	}})
	if err != nil {
		return fmt.Errorf("create volume %s: %w", name, err)
	}
	if r.uid == 0 {
		return nil // a new volume's root is root's
	}
	if err := r.chownVolume(ctx, name); err != nil {
		// Without it the CLI could not write its state: try again next time.
		if _, rerr := r.cli.VolumeRemove(context.WithoutCancel(ctx), name, client.VolumeRemoveOptions{}); rerr != nil {
			r.log.Warn("docker runner: remove volume after a failed chown", "volume", name, "err", rerr)
		}
		return err
	}
	return nil
}

// chownVolume gives a new volume to the CLI's user, with a short container
// of the same image (its chown) as root with only CAP_CHOWN.
func (r *Runner) chownVolume(ctx context.Context, vol string) error {
	owner := fmt.Sprintf("%d:%d", r.uid, r.gid)
	res, err := r.runOnce(ctx, []string{"chown", owner, "/v"}, "0:0", []string{"CHOWN"},
		mount.Mount{Type: mount.TypeVolume, Source: vol, Target: "/v"})
	if err != nil {
		return fmt.Errorf("chown volume %s to %s: %w", vol, owner, err)
	}
	if res.code != 0 {
		return fmt.Errorf("chown volume %s to %s: exit code %d: %s", vol, owner, res.code, strings.TrimSpace(res.stderr))
	}
	return nil
}

// CLIVersion runs `bin --version` in a container of the image, as the
// CLI's user, and returns what it printed: the CLI that matters is the
// image's, not the host's.
func (r *Runner) CLIVersion(ctx context.Context, bin string) (string, error) {
	res, err := r.runOnce(ctx, []string{bin, "--version"}, fmt.Sprintf("%d:%d", r.uid, r.gid), nil)
	if err != nil {
		return "", fmt.Errorf("run %s --version in %s: %w", bin, r.cfg.Image, err)
	}
	if res.code != 0 {
		return "", fmt.Errorf("run %s --version in %s: exit code %d: %s", bin, r.cfg.Image, res.code, strings.TrimSpace(res.stderr))
	}
	return strings.TrimSpace(res.stdout), nil
}

type onceResult struct {
	code           int64
	stdout, stderr string
}

// runOnce runs cmd in a short container of the image with no network, no
// capabilities but caps, and only the mounts given, and returns how it
// ended and what it printed.
func (r *Runner) runOnce(ctx context.Context, cmd []string, user string, caps []string, mounts ...mount.Mount) (onceResult, error) {
	pids := r.cfg.Pids
	created, err := r.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image: r.cfg.Image, User: user, Entrypoint: cmd,
			Labels: map[string]string{LabelInstance: r.cfg.Instance},
		},
		HostConfig: &container.HostConfig{
			NetworkMode: "none",
			CapDrop:     []string{"ALL"},
			CapAdd:      caps,
			SecurityOpt: []string{"no-new-privileges"},
			// Read back below, then removed with the container.
			LogConfig: container.LogConfig{Type: "json-file"},
			Resources: container.Resources{Memory: r.cfg.Memory, MemorySwap: r.cfg.Memory, PidsLimit: &pids},
			Mounts:    mounts,
		},
	})
	if err != nil {
		return onceResult{}, fmt.Errorf("create container: %w", err)
	}
	defer func() {
		if err := r.remove(context.WithoutCancel(ctx), created.ID); err != nil {
			r.log.Warn("docker runner: remove a one-off container", "container", shortID(created.ID), "err", err)
		}
	}()
	waitCtx, cancelWait := context.WithCancel(ctx)
	defer cancelWait()
	wait := r.cli.ContainerWait(waitCtx, created.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := r.cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		abandon(wait, cancelWait)
		return onceResult{}, fmt.Errorf("start container: %w", err)
	}
	var res onceResult
	select {
	case w := <-wait.Result:
		res.code = w.StatusCode
	case err := <-wait.Error:
		return onceResult{}, fmt.Errorf("wait for container: %w", err)
	}
	logs, err := r.cli.ContainerLogs(ctx, created.ID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return res, fmt.Errorf("read its output: %w", err)
	}
	defer logs.Close()
	var stdout, stderr strings.Builder
	if _, err := stdcopy.StdCopy(&stdout, &stderr, io.LimitReader(logs, 1<<20)); err != nil {
		return res, fmt.Errorf("read its output: %w", err)
	}
	res.stdout, res.stderr = stdout.String(), stderr.String()
	return res, nil
}

// remove force-removes a container and returns once it is gone; one gone
// already is no error.
func (r *Runner) remove(ctx context.Context, id string) error {
	_, err := r.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
	switch {
	case err == nil || cerrdefs.IsNotFound(err):
		return nil
	case !cerrdefs.IsConflict(err):
		return err
	}
	// The engine is removing it already (AutoRemove): wait for that.
	w := r.cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionRemoved})
	select {
	case <-w.Result:
		return nil
	case err := <-w.Error:
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("wait for the removal: %w", err)
	}
}

// handle is one session's container.
type handle struct {
	r          *Runner
	id         string
	wait       client.ContainerWaitResult
	cancelWait context.CancelFunc
	att        client.HijackedResponse
	stdin      *os.File
	outDone    chan struct{} // the attach stream ended and the output files are closed

	mu   sync.Mutex
	done bool // Wait returned: the container is gone
}

func (h *handle) Name() string { return "container " + shortID(h.id) }

// ID is the container's full id.
func (h *handle) ID() string { return h.id }

// copyIn feeds the CLI's input until the bot closes its end, then closes
// the write side of the stream: the CLI reads EOF.
func (h *handle) copyIn(in *os.File) {
	if _, err := io.Copy(h.att.Conn, in); err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, syscall.EPIPE) {
		h.r.log.Debug("docker runner: copy to container stdin", "container", shortID(h.id), "err", err)
	}
	_ = h.att.CloseWrite()
	in.Close()
}

// copyOut splits the attach stream into the CLI's stdout and stderr until
// the container's output ends.
func (h *handle) copyOut(stdout, stderr *os.File) {
	defer close(h.outDone)
	defer closeFiles(stdout, stderr)
	if _, err := stdcopy.StdCopy(stdout, stderr, h.att.Reader); err != nil && !errors.Is(err, net.ErrClosed) {
		h.r.log.Debug("docker runner: copy from container", "container", shortID(h.id), "err", err)
	}
}

// removeTimeout bounds the removal of an ended container.
const removeTimeout = time.Minute

// outputGrace bounds how long Wait waits for the attach stream to end
// after the container did (the engine flushes it first).
const outputGrace = 5 * time.Second

// Wait implements claudeproc.Handle: it returns once the container has
// exited and been removed.
func (h *handle) Wait() (claudeproc.ExitStatus, error) {
	var (
		st   claudeproc.ExitStatus
		werr error
	)
	select {
	case res := <-h.wait.Result:
		st = exitStatus(res.StatusCode)
		if res.Error != nil && res.Error.Message != "" {
			werr = fmt.Errorf("container %s: %s", shortID(h.id), res.Error.Message)
		}
	case err := <-h.wait.Error:
		// The engine could not tell (it restarted, say); the removal
		// below ends the container if it still runs.
		st = claudeproc.ExitStatus{Code: -1}
		werr = fmt.Errorf("wait for container %s: %w", shortID(h.id), err)
	}
	h.cancelWait()
	// AutoRemove covers a bot that is gone; here the removal is ours to
	// see through, however the engine's went.
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	if err := h.r.remove(ctx, h.id); err != nil {
		werr = errors.Join(werr, fmt.Errorf("remove container %s: %w", shortID(h.id), err))
	}
	cancel()
	h.mu.Lock()
	h.done = true
	h.mu.Unlock()
	select {
	case <-h.outDone:
	case <-time.After(outputGrace):
		h.r.log.Warn("docker runner: attach stream still open after the container ended; closing it", "container", shortID(h.id))
	}
	h.att.Close()
	<-h.outDone
	// The bot closes the CLI's input once Wait returns; closing our end
	// too ends copyIn even if it does not.
	h.stdin.Close()
	return st, werr
}

// Signal implements claudeproc.Handle: the signal goes to the container's
// init, which passes it to the CLI (SIGKILL ends the container).
func (h *handle) Signal(sig syscall.Signal) error {
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
	if done {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.r.cli.ContainerKill(ctx, h.id, client.ContainerKillOptions{Signal: strconv.Itoa(int(sig))}); err != nil {
		return fmt.Errorf("signal container %s: %w", shortID(h.id), err)
	}
	return nil
}

// exitStatus reads the engine's exit code: 128+n is "killed by signal n"
// (the engine's convention, and the init's for the CLI it runs).
func exitStatus(code int64) claudeproc.ExitStatus {
	if code > 128 && code <= 128+64 {
		return claudeproc.ExitStatus{Code: -1, Signal: syscall.Signal(code - 128)}
	}
	return claudeproc.ExitStatus{Code: int(code)}
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
