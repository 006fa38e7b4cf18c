package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/claudeops/claudeops/claudeproc"
)

var createOpts = metav1.CreateOptions{FieldManager: "claudeops"}

// Start implements claudeproc.Runner: it creates the session's Pod, waits
// until it runs (telling spec.Progress when it waits for capacity), and
// attaches to its stdin, stdout and stderr, which it copies to and from
// spec's files until the attach ends.
func (r *Runner) Start(ctx context.Context, spec claudeproc.Spec) (_ claudeproc.Handle, err error) {
	files := []*os.File{spec.Stdin, spec.Stdout, spec.Stderr, spec.MCPConfig}
	defer func() {
		if err != nil {
			closeFiles(files...)
		}
	}()
	if spec.Dir == "" {
		return nil, errors.New("kubernetes runner: a session needs a working directory")
	}
	// Read now: the pipe's writer ends once it is read.
	first, err := claudeproc.LauncherLine(spec)
	if err != nil {
		return nil, fmt.Errorf("kubernetes runner: %w", err)
	}
	sub, err := r.workSubPath(spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("kubernetes runner: %w", err)
	}
	extra, err := r.extraMounts(spec.Mounts, spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("kubernetes runner: %w", err)
	}
	home, homeSub := r.homeDir(spec.Session)
	if err := r.ensureHome(home); err != nil {
		return nil, err
	}
	return r.run(ctx, spec, mounts{work: sub, home: homeSub, extra: extra}, first)
}

// mounts are the subPaths of the work claim a Pod mounts: the working
// directory at spec.Dir and the CLI's state at ~/.claude ("": none).
type mounts struct {
	work, home string
	// extra are spec.Mounts, parents first.
	extra    []extraMount
	readOnly bool
	// probe: the Pod only prints the CLI's version; it requests next to
	// nothing, so that a session's requests do not keep it from running.
	probe bool
}

// extraMount is one of spec.Mounts: a subPath of the work claim at its
// own path, or an emptyDir.
type extraMount struct {
	path, sub       string
	readOnly, empty bool
}

// extraMounts places spec's Mounts: each below the claim's mount, apart
// from the CLI homes (an empty one too: the Pod sees the claim nowhere
// else).
func (r *Runner) extraMounts(ms []claudeproc.Mount, dir string) ([]extraMount, error) {
	nested, err := claudeproc.NestMounts(ms, filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	out := make([]extraMount, 0, len(nested))
	for i, m := range nested {
		sub, err := r.claimSubPath("mount", m.Path)
		if err != nil {
			return nil, err
		}
		// An empty one holding others stays writable: their mount
		// points are made in it.
		ro := m.Access == claudeproc.ReadOnly || m.Access == claudeproc.Empty && !claudeproc.HoldsOthers(nested, i)
		out = append(out, extraMount{path: m.Path, sub: sub, readOnly: ro, empty: m.Access == claudeproc.Empty || m.Access == claudeproc.Scratch})
	}
	return out, nil
}

// run creates the Pod, waits until it runs and attaches to it, writing
// first, the launcher's line, before spec.Stdin.
func (r *Runner) run(ctx context.Context, spec claudeproc.Spec, m mounts, first []byte) (*handle, error) {
	pod := r.pod(r.podName(spec.Session.Thread), spec, m)
	created, err := r.cli.CoreV1().Pods(r.cfg.Namespace).Create(ctx, pod, createOpts)
	if err != nil {
		return nil, fmt.Errorf("create the session's Pod in namespace %s: %w", r.cfg.Namespace, err)
	}
	h := newHandle(r, created)
	running, err := h.waitRunning(ctx, spec.Progress)
	if err == nil {
		err = h.attach(ctx, spec, first)
	}
	if err != nil {
		h.abandon()
		return nil, err
	}
	r.log.Debug("kubernetes runner: session Pod running", "pod", created.Name, "node", running.Spec.NodeName)
	return h, nil
}

// ensureHome makes the thread's CLI state directory on the claim, the
// CLI's user's alone (the kubelet would make a missing subPath as root),
// and marks it used now: the CLI changes nothing in it itself when it
// resumes, so its modification time is when a session of the thread last
// started (operators prune idle homes by it).
func (r *Runner) ensureHome(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("kubernetes runner: make the CLI's state directory %s: %w", dir, err)
	}
	if os.Getuid() == 0 {
		if err := os.Chown(dir, int(r.cfg.UID), int(r.cfg.GID)); err != nil {
			return fmt.Errorf("kubernetes runner: give %s to %d:%d: %w", dir, r.cfg.UID, r.cfg.GID, err)
		}
	}
	now := time.Now()
	if err := os.Chtimes(dir, now, now); err != nil {
		return fmt.Errorf("kubernetes runner: mark %s used: %w", dir, err)
	}
	return nil
}

// RemoveHome removes the CLI's state of s's thread from the claim: a later
// --resume of its sessions finds nothing. Call it only when no Pod of s
// runs. One not there is no error.
func (r *Runner) RemoveHome(_ context.Context, s claudeproc.Session) error {
	dir, _ := r.homeDir(s)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("kubernetes runner: remove the CLI's state of %s: %w", s.HomeKey(), err)
	}
	return nil
}

// attach connects spec's files to the Pod's container: the first line on
// its stdin is the launcher's, first. It returns once the stream is set
// up (the launcher has been told to run the CLI) or has failed.
func (h *handle) attach(ctx context.Context, spec claudeproc.Spec, first []byte) error {
	req := h.r.cli.CoreV1().RESTClient().Post().Resource("pods").Namespace(h.r.cfg.Namespace).
		Name(h.name).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: container, Stdin: true, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(h.r.rest, "GET", req.URL().String())
	if err != nil {
		return fmt.Errorf("attach to Pod %s: %w", h.name, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(h.r.rest, "POST", req.URL())
	if err != nil {
		return fmt.Errorf("attach to Pod %s: %w", h.name, err)
	}
	// WebSocket first; SPDY where a proxy or an older API server refuses
	// the upgrade (client-go reports that as the streaming module's error).
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return fmt.Errorf("attach to Pod %s: %w", h.name, err)
	}
	// The first line is read only once the stream is up: it says so.
	started := make(chan struct{})
	in := io.MultiReader(&firstRead{r: bytes.NewReader(first), done: started}, closedIsEOF{spec.Stdin})
	h.stdin = spec.Stdin
	go h.stream(exec, in, spec.Stdout, spec.Stderr)
	select {
	case <-started:
		return nil
	case <-h.streamDone:
		return fmt.Errorf("attach to Pod %s: %w", h.name, h.streamErr)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// firstRead closes done on its first read.
type firstRead struct {
	r    io.Reader
	done chan struct{}
	once bool
}

func (f *firstRead) Read(p []byte) (int, error) {
	if !f.once {
		f.once = true
		close(f.done)
	}
	return f.r.Read(p)
}

// closedIsEOF reads r, taking its closing (Wait closes the CLI's input
// once the session is over) for the end of the input it is.
type closedIsEOF struct{ r io.Reader }

func (c closedIsEOF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	return n, err
}

// stream copies between the attach and the CLI's files until the attach
// ends, then closes the output files (the CLI's stdout reads EOF).
func (h *handle) stream(exec remotecommand.Executor, in io.Reader, stdout, stderr *os.File) {
	defer close(h.streamDone)
	defer closeFiles(stdout, stderr)
	err := exec.StreamWithContext(h.streamCtx, remotecommand.StreamOptions{Stdin: in, Stdout: stdout, Stderr: stderr})
	if err == nil {
		err = io.EOF
	}
	h.streamErr = err
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
