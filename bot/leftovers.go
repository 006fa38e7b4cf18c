package bot

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// One session, one process, across restarts too. The local and sandbox
// runners' processes die with the bot (claudeproc: parent-death signal,
// keeper, bwrap's --die-with-parent); a container is removed by the docker
// runner's Prepare. Should a process group outlive the bot all the same,
// its record in the store (made here when it starts, deleted when it
// ends) lets the next start end it before that session resumes.

// recordTimeout bounds the store writes of a process record.
const recordTimeout = 10 * time.Second

// recordingRunner records each process group its runner starts, and
// forgets it when the process ends; live keeps every handle until its
// process has ended, for Kill (live.go).
type recordingRunner struct {
	inner claudeproc.Runner
	store *store.Store
	log   *slog.Logger
	now   func() time.Time
	live  *liveSet
}

// Start implements claudeproc.Runner.
func (r recordingRunner) Start(ctx context.Context, spec claudeproc.Spec) (claudeproc.Handle, error) {
	h, err := r.record(ctx, spec)
	if err != nil {
		return nil, err
	}
	return r.live.track(h), nil
}

// record starts a process and records it. A process it cannot record is
// ended and not used: a crash could leave it running with nobody to end
// it.
func (r recordingRunner) record(ctx context.Context, spec claudeproc.Spec) (claudeproc.Handle, error) {
	h, err := r.inner.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	gr, ok := h.(claudeproc.Grouped)
	if !ok {
		return h, nil // a container: not a process of ours
	}
	g, ok := gr.Group()
	if !ok {
		r.log.Warn("claude process not identified (is /proc readable?): a crash of the bot could not be cleaned up after",
			"claude", h.Name())
		return h, nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	id, err := r.store.RecordProcess(rctx, store.SessionProcess{
		ThreadKey: spec.Session.Thread, Name: h.Name(), PGID: g.ID,
		PID: g.Leader.PID, StartTicks: g.Leader.Start, KeeperPID: g.Keeper.PID, KeeperTicks: g.Keeper.Start,
		BootID: g.Leader.Boot, StartedAt: r.now(),
	})
	if err != nil {
		_ = h.Signal(syscall.SIGKILL)
		_, _ = h.Wait()
		return nil, err
	}
	return &recordedHandle{Handle: h, r: r, id: id}, nil
}

// PassesMCPConfig implements claudeproc.ConfigPasser as its runner does:
// the operator's MCP servers go through it to the CLI.
func (r recordingRunner) PassesMCPConfig() bool {
	cp, ok := r.inner.(claudeproc.ConfigPasser)
	return ok && cp.PassesMCPConfig()
}

// RemoveHome implements homeRemover (homes.go) for the runner it wraps: nothing to
// do when that one keeps no homes.
func (r recordingRunner) RemoveHome(ctx context.Context, s claudeproc.Session) error {
	if h, ok := r.inner.(homeRemover); ok {
		return h.RemoveHome(ctx, s)
	}
	return nil
}

// recordedHandle forgets its record once the process (and its group) has
// ended.
type recordedHandle struct {
	claudeproc.Handle
	r  recordingRunner
	id int64
}

func (h *recordedHandle) Wait() (claudeproc.ExitStatus, error) {
	st, err := h.Handle.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if ferr := h.r.store.ForgetProcess(ctx, h.id); ferr != nil {
		// Harmless but for a line at the next start: the group is gone,
		// and the identity check keeps its pid safe from a kill.
		h.r.log.Warn("forget the record of an ended claude process", "claude", h.Name(), "err", ferr)
	}
	return st, err
}

// Pid is the process's id, as claudeproc.Process asks its handle.
func (h *recordedHandle) Pid() int {
	if p, ok := h.Handle.(interface{ Pid() int }); ok {
		return p.Pid()
	}
	return 0
}

// Group implements claudeproc.Grouped.
func (h *recordedHandle) Group() (claudeproc.Group, bool) {
	return h.Handle.(claudeproc.Grouped).Group()
}

// Kill is the forced exit's end of the sessions (cmd's second Ctrl-C): no
// turn is interrupted, nothing recorded, drained or told. Each session's
// process not seen ending yet gets SIGKILL through its runner (the whole
// session: a local CLI's process group and every process under it, the
// sandbox, the container, the Pod), and Kill waits until each runner has
// seen its end (a local session's keeper ended and reaped with it, a
// container removed, a Pod deleted) or ctx ends. It returns how many it
// killed, and an error naming those still not ended when ctx ended. A
// process whose start is still under way is not seen: the local runners
// end it with the bot (parent-death signal, keeper), the others at the
// next start. The next start also settles what the killed turns left
// (Recover).
func (b *Bot) Kill(ctx context.Context) (int, error) {
	hs := b.live.all()
	for _, h := range hs {
		if err := h.Signal(syscall.SIGKILL); err != nil {
			b.log.Warn("kill a session", "claude", h.Name(), "err", err)
		}
	}
	var left []string
	for _, h := range hs {
		select {
		case <-h.done:
		case <-ctx.Done():
			left = append(left, h.Name())
		}
	}
	if len(left) > 0 {
		return len(hs), fmt.Errorf("sessions not seen ending: %v: %w", left, context.Cause(ctx))
	}
	return len(hs), nil
}

// endLeftovers ends the process groups a previous run recorded and did not
// see end, then forgets them. A record whose pid now names another process
// is only forgotten: claudeproc.EndLeftover signals nothing it cannot
// prove is the session's.
func (b *Bot) endLeftovers(ctx context.Context) error {
	recs, err := b.store.SessionProcesses(ctx)
	if err != nil {
		return fmt.Errorf("recover session processes: %w", err)
	}
	for _, rec := range recs {
		log := b.log.With("thread", rec.ThreadKey, "claude", rec.Name, "pgid", rec.PGID)
		g := claudeproc.Group{
			ID:     rec.PGID,
			Leader: claudeproc.ProcessID{PID: rec.PID, Start: rec.StartTicks, Boot: rec.BootID},
		}
		if rec.KeeperPID > 0 {
			g.Keeper = claudeproc.ProcessID{PID: rec.KeeperPID, Start: rec.KeeperTicks, Boot: rec.BootID}
		}
		res, err := claudeproc.EndLeftover(ctx, g, b.cfg.StopGrace)
		switch {
		case err != nil:
			log.Error("leftover claude process not ended", "err", err)
		case res.Outcome == claudeproc.LeftoverEnded && len(res.Left) > 0:
			log.Error("leftover claude process group ended, but processes remain", "left", res.Left)
		case res.Outcome == claudeproc.LeftoverEnded:
			log.Warn("a claude process group left by a previous run was still running: ended")
		case res.Outcome == claudeproc.LeftoverUnproven:
			log.Warn("processes remain in the process group of a previous run's claude, but nothing proves they are its own: not signalled",
				"pids", res.Left)
		default:
			log.Debug("previous run's claude process gone", "outcome", res.Outcome.String())
		}
		if err := b.store.ForgetProcess(ctx, rec.ID); err != nil {
			return fmt.Errorf("recover session processes: %w", err)
		}
	}
	return nil
}

// Hides implements claudeproc.Viewer for the runner it wraps: nothing is
// hidden when that one hides nothing.
func (r recordingRunner) Hides(p string) bool {
	if v, ok := r.inner.(claudeproc.Viewer); ok {
		return v.Hides(p)
	}
	return false
}

// CanMount implements claudeproc.MountChecker for the runner it wraps:
// any directory when that one shows any.
func (r recordingRunner) CanMount(dir string) bool {
	if mc, ok := r.inner.(claudeproc.MountChecker); ok {
		return mc.CanMount(dir)
	}
	return true
}
