package bot

import (
	"context"
	"fmt"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/workspace"
)

// The life of worktrees beyond one turn: idle ones cleaned, scheduled runs
// leaving a branch, and what status shows.

// sweepWorktrees hands each thread whose worktree has been idle past the
// TTL to its worker, which removes it unless the thread is busy.
func (b *Bot) sweepWorktrees(ctx context.Context) {
	if b.cfg.Workspace.Manager == nil {
		return
	}
	idle, err := b.store.IdleWorktrees(ctx, b.now().Add(-b.cfg.Workspace.TTL))
	if err != nil {
		b.log.Error("look for idle worktrees", "err", err)
		return
	}
	for _, t := range idle {
		b.toWorker(adapters.ThreadKey(t.Key), input{kind: inReclaim})
	}
}

// reclaimIdle removes the thread's worktree if the thread is still idle
// past the TTL (a message may have come since the sweep looked).
func (w *worker) reclaimIdle(ctx context.Context) {
	if err := w.loadThread(ctx, adapters.User{}); err != nil {
		w.log.Error("load thread", "err", err)
		return
	}
	ttl := w.cfg.Workspace.TTL
	if _, ok := w.worktree(); !ok || w.now().Sub(w.thread.LastActivity) < ttl {
		return
	}
	if !w.quiet() || w.schedRun != nil {
		return
	}
	w.stop("")
	w.releaseWorktree(ctx, "This thread was idle for "+text.Duration(ttl))
	if w.thread.Worktree == "" {
		// The CLI keeps sessions by directory: the next worktree starts a
		// fresh conversation, so what the CLI kept for this one goes too
		// (every scheduled run's thread would otherwise leave a home).
		w.removeHome(ctx)
	}
}

// runBranch names the scheduled run's branch in its record and, for a
// schedule added with --push, commits and pushes what the run changed.
func (w *worker) runBranch(ctx context.Context, out *runOutcome) {
	wt, ok := w.worktree()
	if !ok || w.schedRun == nil {
		return
	}
	out.res.Branch = wt.Branch
	s := w.schedRun.schedule
	if !s.Push {
		return
	}
	if out.err != nil {
		w.reply(ctx, "Not pushed: the run did not succeed. Its changes stay on "+codeSpan(wt.Branch)+" (`diff`, `commit`, `push`).")
		return
	}
	m := w.cfg.Workspace.Manager
	gctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	msg := fmt.Sprintf("claudeops schedule #%d: %s", s.ID, shorten(oneLine(s.Prompt), 60))
	by := workspace.Person{Name: fmt.Sprintf("claudeops schedule #%d", s.ID), Email: personOf(adapters.User{ID: s.CreatedBy}).Email}
	id, changed, err := m.Commit(gctx, wt, msg, by)
	switch {
	case err != nil:
		w.gitRefused(ctx, "commit", err, false)
		out.err = fmt.Errorf("commit the run's changes on %s: %w", wt.Branch, err)
		w.reply(ctx, "Could not commit the run's changes: "+err.Error())
		return
	case !changed:
		w.reply(ctx, "This run changed nothing: no commit, nothing pushed.")
		return
	}
	out.res.Commit = id
	if err := m.Push(gctx, wt); err != nil {
		w.gitRefused(ctx, "push", err, false)
		out.err = fmt.Errorf("push %s: %w", wt.Branch, err)
		w.reply(ctx, "Committed "+shortCommit(id)+" on "+codeSpan(wt.Branch)+", but the push failed: "+err.Error())
		return
	}
	w.reply(ctx, "Pushed branch "+codeSpan(wt.Branch)+" (commit "+shortCommit(id)+").")
}

// workspaceLines are status's lines about the thread's branch, and for
// admins the workspaces' disk use.
func (w *worker) workspaceLines(ctx context.Context, admin bool) []string {
	var lines []string
	if wt, ok := w.worktree(); ok {
		lines = append(lines, "Branch: "+codeSpan(wt.Branch)+" from "+shortCommit(wt.Base)+" · worktree "+codeSpan(wt.Path))
	} else if w.thread.Branch != "" {
		lines = append(lines, "Branch: "+codeSpan(w.thread.Branch)+" (worktree removed)")
	}
	if admin && w.cfg.Workspace.Manager != nil {
		uctx, cancel := context.WithTimeout(ctx, gitTimeout)
		defer cancel()
		if n, err := w.cfg.Workspace.Manager.DiskUsage(uctx); err != nil {
			lines = append(lines, "Workspaces: disk use unknown ("+err.Error()+")")
		} else {
			lines = append(lines, "Workspaces: "+byteSize(n)+" on disk")
		}
	}
	return lines
}

// byteSize renders n bytes for people: 512 B, 3.4 MiB.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
