package docker

import (
	"context"
	"fmt"
	"io"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/claudeops/claudeops/claudeproc"
)

// ensureVolume makes the thread's volume if it is not there, owned by the
// user the CLI runs as.
func (r *Runner) ensureVolume(ctx context.Context, name string, s claudeproc.Session) error {
	r.volMu.Lock()
	defer r.volMu.Unlock()
	if _, err := r.cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{}); err == nil {
		return nil
	} else if !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("inspect volume %s: %w", name, err)
	}
	_, err := r.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Labels: map[string]string{
		LabelInstance: r.cfg.Instance, LabelChannel: Hash(s.Channel), LabelThread: Hash(s.HomeKey()),
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

// RemoveHome removes the volume holding the CLI's state of s's thread: a
// later --resume of its sessions finds nothing. Call it only when no
// container of s runs (the engine refuses to remove a volume in use). A
// volume not there is no error.
func (r *Runner) RemoveHome(ctx context.Context, s claudeproc.Session) error {
	r.volMu.Lock()
	defer r.volMu.Unlock()
	name := r.VolumeName(s)
	if _, err := r.cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	return nil
}

// removeChannelVolumes removes this instance's volumes of an earlier
// version, one per channel (no thread label): every thread of a channel
// shared it, so what it holds may be another thread's doing, and no
// session mounts it any more. It returns how many it removed.
func (r *Runner) removeChannelVolumes(ctx context.Context) (int, error) {
	vols, err := r.cli.VolumeList(ctx, client.VolumeListOptions{
		Filters: make(client.Filters).Add("label", LabelInstance+"="+r.cfg.Instance),
	})
	if err != nil {
		return 0, fmt.Errorf("list volumes: %w", err)
	}
	n := 0
	for _, v := range vols.Items {
		if _, perThread := v.Labels[LabelThread]; perThread {
			continue
		}
		if _, err := r.cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			return n, fmt.Errorf("remove volume %s of an earlier version: %w", v.Name, err)
		}
		n++
	}
	return n, nil
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
	return r.cliVersionIn(ctx, r.cfg.Image, bin)
}

// cliVersionIn is CLIVersion in image.
func (r *Runner) cliVersionIn(ctx context.Context, image, bin string) (string, error) {
	res, err := r.runOnceIn(ctx, image, []string{bin, "--version"}, fmt.Sprintf("%d:%d", r.uid, r.gid), nil)
	if err != nil {
		return "", fmt.Errorf("run %s --version in %s: %w", bin, image, err)
	}
	if res.code != 0 {
		return "", fmt.Errorf("run %s --version in %s: exit code %d: %s", bin, image, res.code, strings.TrimSpace(res.stderr))
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
	return r.runOnceIn(ctx, r.cfg.Image, cmd, user, caps, mounts...)
}

// runOnceIn is runOnce in image.
func (r *Runner) runOnceIn(ctx context.Context, image string, cmd []string, user string, caps []string, mounts ...mount.Mount) (onceResult, error) {
	pids := r.cfg.Pids
	created, err := r.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image: image, User: user, Entrypoint: cmd,
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
