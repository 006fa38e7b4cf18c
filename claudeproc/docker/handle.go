package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/claudeops/claudeops/claudeproc"
)

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

// copyIn writes first (the launcher's line, if any), then feeds the
// CLI's input until the bot closes its end, then closes the write side
// of the stream: the CLI reads EOF.
func (h *handle) copyIn(first []byte, in *os.File) {
	_, err := h.att.Conn.Write(first)
	if err == nil {
		_, err = io.Copy(h.att.Conn, in)
	}
	if err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, syscall.EPIPE) {
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
