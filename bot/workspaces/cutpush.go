package workspaces

import (
	"context"
	"fmt"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/workspace"
)

// A push the bot died during may have reached the remote or not: git dies
// with the bot, but the remote may have taken the push before. `push`
// settles its message before git starts (Thread.Settle), so the restart
// does not tell it as "not run"; the Manager keeps the push's record
// (workspace.PushCut), and at the next start its thread is told what the
// remote says.

// CutPushes is what Recover needs of the workspaces; *workspace.Manager is
// it.
type CutPushes interface {
	// CutPushes lists the pushes a dead run left cut off.
	CutPushes() ([]workspace.PushCut, error)
	// CheckCut asks the remote where the cut push's branch is.
	CheckCut(ctx context.Context, c workspace.PushCut) workspace.CutCheck
	// ForgetCut removes a cut push's record once told.
	ForgetCut(c workspace.PushCut) error
}

var _ thread.Recoverer = (*Extension)(nil)

// cutPush asks a thread's part to tell a push cut off by a restart.
type cutPush struct{ c workspace.PushCut }

// Recover hands each push a dead run left cut off to its thread.
func (e *Extension) Recover(ctx context.Context) {
	m, ok := e.cfg.Manager.(CutPushes)
	if !ok {
		return
	}
	cuts, err := m.CutPushes()
	if err != nil {
		e.host.Log().Error("look for pushes cut off by a restart", "err", err)
		return
	}
	for _, c := range cuts {
		key := adapters.ThreadKey(c.Owner)
		if _, ok := key.Ref(); !ok || !e.host.PostTo(key, cutPush{c}) {
			// Nobody to tell (or not now): said in the log, told at a later start.
			e.host.Log().Warn("a push cut off by a restart, not told", "owner", c.Owner, "branch", c.Worktree.Branch, "commit", c.Commit)
		}
	}
}

// tellCut asks the remote and tells the thread, then forgets the push.
func (p *part) tellCut(ctx context.Context, c workspace.PushCut) {
	m, ok := p.ext.cfg.Manager.(CutPushes)
	if !ok {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	chk := m.CheckCut(cctx, c)
	p.t.Log().Info("a push cut off by a restart, checked", "branch", c.Worktree.Branch, "commit", c.Commit, "state", int(chk.State), "remote", chk.Remote, "err", chk.Err)
	p.t.Notice(ctx, cutText(c, chk), chk.State != workspace.CutPushed)
	if err := m.ForgetCut(c); err != nil {
		p.t.Log().Warn("forget a told cut push (it will be told again)", "err", err)
	}
}

// cutText says what became of a cut push, and what was checked.
func cutText(c workspace.PushCut, chk workspace.CutCheck) string {
	branch := c.Worktree.Branch
	head := fmt.Sprintf("The bot restarted while pushing %s (commit %s): ", text.CodeSpan(branch), text.ShortCommit(c.Commit))
	remote := "origin/" + branch
	switch chk.State {
	case workspace.CutPushed:
		return head + fmt.Sprintf("pushed (checked: %s is at %s).", remote, text.ShortCommit(chk.Remote))
	case workspace.CutNotPushed:
		where := "the remote has no branch " + text.CodeSpan(branch)
		if chk.Remote != "" {
			where = remote + " is at " + text.ShortCommit(chk.Remote)
		}
		return head + "not pushed (checked: " + where + "). `push` sends it again."
	}
	return head + "unknown — checked: the remote did not answer (" + chk.Err.Error() + "). " +
		"`push` again is safe: it is never forced, and sends nothing the remote has."
}
