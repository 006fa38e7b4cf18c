package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claudeops/claudeops/claudeproc"
)

// handle is one session's Pod.
type handle struct {
	r    *Runner
	name string
	uid  types.UID
	rv   string // resourceVersion the watches start from
	// streamCtx ends the attach (Wait, once the Pod has ended).
	streamCtx    context.Context
	cancelStream context.CancelFunc
	streamDone   chan struct{} // the attach ended and the output files are closed
	streamErr    error         // why it ended; read after streamDone
	stdin        *os.File

	mu      sync.Mutex
	done    bool // Wait returned: the Pod is gone
	deleted bool // the runner deleted the Pod (not someone else)
}

func newHandle(r *Runner, p *corev1.Pod) *handle {
	ctx, cancel := context.WithCancel(context.Background())
	return &handle{r: r, name: p.Name, uid: p.UID, rv: p.ResourceVersion,
		streamCtx: ctx, cancelStream: cancel, streamDone: make(chan struct{})}
}

func (h *handle) Name() string { return "pod " + h.name }

// deleteTimeout bounds a deletion and the wait for the Pod to be gone.
const deleteTimeout = time.Minute

// outputGrace bounds how long Wait waits for the Pod to end after its
// attach did, and for the attach after the Pod.
const outputGrace = 15 * time.Second

// abandon deletes a Pod that never became a session.
func (h *handle) abandon() {
	h.cancelStream()
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	if err := h.delete(ctx, 0); err != nil {
		h.r.log.Warn("kubernetes runner: delete a Pod that did not start", "pod", h.name, "err", err)
	}
}

// delete deletes the Pod (this one: by uid) with grace seconds for its CLI.
func (h *handle) delete(ctx context.Context, grace int64) error {
	h.mu.Lock()
	h.deleted = true
	h.mu.Unlock()
	uid := h.uid
	pre := metav1.Preconditions{UID: &uid}
	err := h.r.cli.CoreV1().Pods(h.r.cfg.Namespace).Delete(ctx, h.name, metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &pre})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete Pod %s: %w", h.name, err)
	}
	return nil
}

// Wait implements claudeproc.Handle: it returns once the attach has ended
// and the Pod is gone, with how the CLI ended (or why the Pod did).
func (h *handle) Wait() (claudeproc.ExitStatus, error) {
	ended := make(chan podEnd, 1)
	wctx, stopWatch := context.WithCancel(context.Background())
	go func() { ended <- h.watchEnd(wctx) }()
	var end podEnd
	select {
	case end = <-ended:
		// The Pod is done: its output has ended, or will at once.
		select {
		case <-h.streamDone:
		case <-time.After(outputGrace):
			h.r.log.Warn("kubernetes runner: attach still open after the Pod ended; closing it", "pod", h.name)
		}
	case <-h.streamDone:
		// The CLI's output ended: the Pod should follow.
		select {
		case end = <-ended:
		case <-time.After(outputGrace):
			end = podEnd{status: claudeproc.ExitStatus{Code: -1, Reason: "the attach to its Pod ended (" + errText(h.streamErr) + ")"}}
		}
	}
	stopWatch()
	h.cancelStream()
	<-h.streamDone
	var werr error
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	if err := h.delete(ctx, 0); err != nil {
		werr = err
	} else if err := h.r.waitGone(ctx, h.name, h.uid); err != nil {
		werr = err
	}
	cancel()
	h.mu.Lock()
	h.done = true
	h.mu.Unlock()
	// The bot closes the CLI's input once Wait returns; closing our end
	// too ends the copy even if it does not.
	if h.stdin != nil {
		h.stdin.Close()
	}
	if end.err != nil {
		werr = errors.Join(end.err, werr)
	}
	return end.status, werr
}

func errText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// Signal implements claudeproc.Handle. A Pod takes no signals through the
// API but its deletion's: SIGKILL deletes it at once, SIGTERM (and any
// other ending signal) with a grace for the CLI.
func (h *handle) Signal(sig syscall.Signal) error {
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
	if done {
		return nil
	}
	var grace int64 = gracePeriod
	if sig == syscall.SIGKILL {
		grace = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h.delete(ctx, grace)
}
