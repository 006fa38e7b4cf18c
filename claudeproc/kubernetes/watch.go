package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/claudeops/claudeops/claudeproc"
)

// errStopWatch ends a watch early (the observer has its answer).
var errStopWatch = errors.New("stop watching")

// watchPod calls see with each state of Pod name from resourceVersion rv
// on (nil once it is gone, or a new Pod took its name), until see returns
// an error (errStopWatch: done) or ctx ends. Watches the API server ends
// are taken up again where they stopped.
func (r *Runner) watchPod(ctx context.Context, name string, uid types.UID, rv string, see func(*corev1.Pod) error) error {
	pods := r.cli.CoreV1().Pods(r.cfg.Namespace)
	for {
		if rv == "" {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return stopped(see(nil))
			case err != nil:
				return fmt.Errorf("get Pod %s: %w", name, err)
			case p.UID != uid:
				return stopped(see(nil))
			}
			if err := see(p); err != nil {
				return stopped(err)
			}
			rv = p.ResourceVersion
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: rv,
			AllowWatchBookmarks: true,
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rv = "" // too old, say: read it afresh
			if !sleepCtx(ctx, time.Second) {
				return ctx.Err()
			}
			continue
		}
		next, err := r.drain(ctx, w, uid, see)
		w.Stop()
		if err != nil {
			return stopped(err)
		}
		rv = next
	}
}

// drain hands see each event of w, until w ends (returning where to go on
// from: "" to read the Pod afresh) or see is done.
func (r *Runner) drain(ctx context.Context, w watch.Interface, uid types.UID, see func(*corev1.Pod) error) (string, error) {
	rv := ""
	for {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil
			}
			switch ev.Type {
			case watch.Error:
				return "", nil
			case watch.Bookmark:
				if p, ok := ev.Object.(*corev1.Pod); ok {
					rv = p.ResourceVersion
				}
				continue
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			rv = p.ResourceVersion
			if ev.Type == watch.Deleted || p.UID != uid {
				return "", see(nil)
			}
			if err := see(p); err != nil {
				return "", err
			}
		}
	}
}

func stopped(err error) error {
	if errors.Is(err, errStopWatch) {
		return nil
	}
	return err
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fatalWaiting are container states no wait will mend, or none an
// operator should wait minutes to hear of (a Secret that is missing, a
// command the image lacks). CreateContainerError is left to the timeout:
// a loaded node reports it for what passes.
var fatalWaiting = map[string]bool{
	"ErrImageNeverPull": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "RunContainerError": true,
}

// waitRunning waits until the Pod's container runs, telling progress what
// it waits on when that is capacity (or an image), and gives up after the
// runner's StartTimeout.
func (h *handle) waitRunning(ctx context.Context, progress func(string)) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, h.r.cfg.StartTimeout)
	defer cancel()
	var running *corev1.Pod
	var told, waiting string
	err := h.r.watchPod(ctx, h.name, h.uid, h.rv, func(p *corev1.Pod) error {
		if p == nil || p.DeletionTimestamp != nil {
			return fmt.Errorf("its Pod %s was deleted before the CLI ran", h.name)
		}
		if st := containerStatus(p); st != nil {
			switch {
			case st.State.Running != nil:
				running = p
				return errStopWatch
			case st.State.Terminated != nil:
				return fmt.Errorf("its Pod %s ended before the CLI could be attached: %s", h.name, terminatedText(st.State.Terminated))
			case st.State.Waiting != nil && fatalWaiting[st.State.Waiting.Reason]:
				return fmt.Errorf("its Pod %s cannot start: %s: %s", h.name, st.State.Waiting.Reason, st.State.Waiting.Message)
			case st.State.Waiting != nil && strings.Contains(st.State.Waiting.Reason, "Image"):
				waiting = "Waiting for the image of its Pod: " + st.State.Waiting.Reason + ": " + st.State.Waiting.Message
			}
		}
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			return fmt.Errorf("its Pod %s ended before the CLI ran: %s %s", h.name, p.Status.Reason, p.Status.Message)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				waiting = "Waiting for capacity in the cluster: " + c.Message
			}
		}
		if waiting != told && progress != nil {
			told = waiting
			progress(waiting)
		}
		return nil
	})
	switch {
	case err == nil && running != nil:
		return running, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil && context.Cause(ctx) == context.DeadlineExceeded:
		why := "it was not scheduled"
		if waiting != "" {
			why = waiting
		}
		return nil, fmt.Errorf("its Pod did not run within %s, given up (%s)", h.r.cfg.StartTimeout, why)
	case err == nil:
		return nil, fmt.Errorf("its Pod %s is gone", h.name)
	}
	return nil, err
}

// podEnd is how a session's Pod ended.
type podEnd struct {
	status claudeproc.ExitStatus
	err    error
}

// watchEnd waits until the Pod's CLI has ended (or the Pod is gone) and
// says how: its exit code, or the Pod's deletion or eviction by someone
// other than the runner.
func (h *handle) watchEnd(ctx context.Context) podEnd {
	var end podEnd
	var other string // why the Pod ends, when not the runner's doing
	err := h.r.watchPod(ctx, h.name, h.uid, "", func(p *corev1.Pod) error {
		if p == nil {
			if other == "" && !h.deletedByUs() {
				other = "its Pod was deleted"
			}
			end.status = claudeproc.ExitStatus{Code: -1, Signal: syscall.SIGKILL}
			return errStopWatch
		}
		if p.DeletionTimestamp != nil && other == "" && !h.deletedByUs() {
			other = "its Pod was deleted"
		}
		if p.Status.Reason == "Evicted" {
			other = "its Pod was evicted: " + p.Status.Message
		}
		if st := containerStatus(p); st != nil && st.State.Terminated != nil {
			end.status = exitStatus(st.State.Terminated)
			if st.State.Terminated.Reason == "OOMKilled" && other == "" {
				other = "its Pod ran out of memory (OOMKilled, limit " + h.r.cfg.MemoryLimit.String() + ")"
			}
			return errStopWatch
		}
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			end.status = claudeproc.ExitStatus{Code: -1}
			return errStopWatch
		}
		return nil
	})
	if err != nil {
		end.err = fmt.Errorf("watch Pod %s: %w", h.name, err)
		if end.status == (claudeproc.ExitStatus{}) {
			end.status = claudeproc.ExitStatus{Code: -1}
		}
	}
	if other != "" {
		end.status.Reason = other
	}
	return end
}

func (h *handle) deletedByUs() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.deleted
}

func containerStatus(p *corev1.Pod) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == container {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// exitStatus reads a terminated container: 128+n is "killed by signal n".
func exitStatus(t *corev1.ContainerStateTerminated) claudeproc.ExitStatus {
	if t.Signal != 0 {
		return claudeproc.ExitStatus{Code: -1, Signal: syscall.Signal(t.Signal)}
	}
	if c := t.ExitCode; c > 128 && c <= 128+64 {
		return claudeproc.ExitStatus{Code: -1, Signal: syscall.Signal(c - 128)}
	}
	return claudeproc.ExitStatus{Code: int(t.ExitCode)}
}

func terminatedText(t *corev1.ContainerStateTerminated) string {
	s := fmt.Sprintf("exit code %d", t.ExitCode)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	if m := strings.TrimSpace(t.Message); m != "" {
		s += ": " + m
	}
	return s
}

// waitGone waits until Pod name (uid) no longer exists.
func (r *Runner) waitGone(ctx context.Context, name string, uid types.UID) error {
	err := r.watchPod(ctx, name, uid, "", func(p *corev1.Pod) error {
		if p == nil {
			return errStopWatch
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("wait for Pod %s to be gone: %w", name, err)
	}
	return nil
}

// removeLeftovers deletes every Pod of this instance (a previous run's:
// none of this run's exist yet) and waits until they are gone.
func (r *Runner) removeLeftovers(ctx context.Context) (int, error) {
	pods := r.cli.CoreV1().Pods(r.cfg.Namespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: r.Selector()})
	if err != nil {
		return 0, fmt.Errorf("list Pods a previous run left: %w", err)
	}
	var zero int64
	for _, p := range list.Items {
		uid := p.UID
		err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return 0, fmt.Errorf("delete Pod %s a previous run left: %w", p.Name, err)
		}
	}
	for _, p := range list.Items {
		dctx, cancel := context.WithTimeout(ctx, deleteTimeout)
		err := r.waitGone(dctx, p.Name, p.UID)
		cancel()
		if err != nil {
			return 0, err
		}
	}
	return len(list.Items), nil
}
