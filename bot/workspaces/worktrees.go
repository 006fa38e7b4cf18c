package workspaces

import (
	"context"
	"fmt"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/workspace"
)

// The life of worktrees beyond one turn: idle ones removed, `new`
// removing them, scheduled runs leaving a branch, and what status shows.

// reclaimIdle removes the thread's worktree if the thread is still idle
// past the TTL (a message may have come since the sweep looked).
func (p *part) reclaimIdle(ctx context.Context) {
	ttl := p.ext.cfg.TTL
	if _, ok := p.worktree(); !ok || p.t.Now().Sub(p.t.Record().LastActivity) < ttl {
		return
	}
	if _, run := p.t.Run(); run || !p.t.State().Quiet() {
		return
	}
	p.t.Stop("")
	p.release(ctx, "This thread was idle for "+text.Duration(ttl))
	if p.t.Record().Worktree == "" {
		// The CLI keeps sessions by directory: the next worktree starts a
		// fresh conversation, so what the CLI kept for this one goes too
		// (every scheduled run's thread would otherwise leave a home).
		p.t.RemoveHome(ctx)
	}
}

// release removes the thread's worktree (its session has ended) and says
// what became of its branch.
func (p *part) release(ctx context.Context, why string) {
	wt, ok := p.worktree()
	if !ok {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	kept, err := p.ext.cfg.Manager.Remove(rctx, wt)
	if err != nil {
		p.t.Log().Error("remove worktree", "path", wt.Path, "err", err)
		p.gitRefused(ctx, "remove", err, false)
		p.t.Reply(ctx, "The worktree of "+text.CodeSpan(wt.Branch)+" could not be removed: "+err.Error())
		return
	}
	p.snap = ""
	p.t.SetWorkspace(ctx, thread.Workspace{Repo: wt.Repo, Branch: wt.Branch, Base: wt.Base})
	msg := why + ": its worktree was removed, and the branch " + text.CodeSpan(wt.Branch)
	if kept {
		msg += " was kept: it has commits the remote does not have (uncommitted work was committed to it first)."
	} else {
		msg += " with it, as the remote has all of it."
	}
	p.t.Reply(ctx, msg)
}

// runBranch names the scheduled run's branch in its record and, for a
// schedule added with --push, commits and pushes what the run changed.
func (p *part) runBranch(ctx context.Context, r thread.Run, e *thread.TurnEnd) {
	wt, ok := p.worktree()
	if !ok {
		return
	}
	e.Branch = wt.Branch
	s := r.Schedule
	if !s.Push {
		return
	}
	if e.Err != nil {
		p.t.Reply(ctx, "Not pushed: the run did not succeed. Its changes stay on "+text.CodeSpan(wt.Branch)+" (`diff`, `commit`, `push`).")
		if s.PR {
			// Nothing to look at: the next run may continue the branch.
			p.t.Post(handOver{why: "The run failed having changed nothing", unchanged: true})
		}
		return
	}
	m := p.ext.cfg.Manager
	gctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	msg := fmt.Sprintf("claudeops schedule #%d: %s", s.ID, text.Shorten(text.OneLine(s.Prompt), 60))
	by := workspace.Person{Name: fmt.Sprintf("claudeops schedule #%d", s.ID), Email: personOf(adapters.User{ID: s.CreatedBy}).Email}
	id, changed, err := m.Commit(gctx, wt, msg, by)
	switch {
	case err != nil:
		p.gitRefused(ctx, "commit", err, false)
		e.Err = fmt.Errorf("commit the run's changes on %s: %w", wt.Branch, err)
		p.t.Reply(ctx, "Could not commit the run's changes: "+err.Error())
		return
	case !changed && s.PR:
		p.t.Reply(ctx, "This run changed nothing: no commit, nothing pushed, no pull request.")
		p.t.Post(handOver{why: "The run is done"})
		return
	case !changed:
		p.t.Reply(ctx, "This run changed nothing: no commit, nothing pushed.")
		return
	}
	e.Commit = id
	if err := m.Push(gctx, wt, string(p.t.Ref().Key())); err != nil {
		p.gitRefused(ctx, "push", err, false)
		e.Err = fmt.Errorf("push %s: %w", wt.Branch, err)
		p.t.Reply(ctx, "Committed "+text.ShortCommit(id)+" on "+text.CodeSpan(wt.Branch)+", but the push failed: "+err.Error())
		return
	}
	p.t.Reply(ctx, "Pushed branch "+text.CodeSpan(wt.Branch)+" (commit "+text.ShortCommit(id)+").")
	if s.PR {
		p.runPR(gctx, r, e, wt)
		p.t.Post(handOver{why: "The run is done and its branch pushed, for the schedule's next run to continue"})
	}
}

// Status says the thread's branch, and for admins the workspaces' disk use.
func (p *part) Status(ctx context.Context, s *thread.Status) {
	if s.Cost {
		return
	}
	if wt, ok := p.worktree(); ok {
		s.Tail = append(s.Tail, "Branch: "+text.CodeSpan(wt.Branch)+" from "+text.ShortCommit(wt.Base)+" · worktree "+text.CodeSpan(wt.Path))
	} else if b := p.t.Record().Branch; b != "" {
		s.Tail = append(s.Tail, "Branch: "+text.CodeSpan(b)+" (worktree removed)")
	}
	if m := p.ext.cfg.Manager; s.Admin && m != nil {
		uctx, cancel := context.WithTimeout(ctx, gitTimeout)
		defer cancel()
		if n, err := m.DiskUsage(uctx); err != nil {
			s.Tail = append(s.Tail, "Workspaces: disk use unknown ("+err.Error()+")")
		} else {
			s.Tail = append(s.Tail, "Workspaces: "+text.Bytes(n)+" on disk")
		}
	}
}
