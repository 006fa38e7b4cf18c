package workspaces

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/workspace"
)

// The commands about the channel's repository and the thread's branch:
// repo, diff, commit, push; after `cwd` in the table.

// Commands are the extension's rows of the command table.
func (e *Extension) Commands() []thread.Command {
	return []thread.Command{
		{Name: "repo", Who: thread.BotAdmins, Usage: []string{"repo [<path or clone URL>|none]"}, Help: "show, or (bot admins) bind, the channel's git repository: each thread then works in a worktree on a branch of its own", Max: 1, Run: thread.Bind((*part).cmdRepo), After: "cwd"},
		{Name: "diff", Usage: []string{"diff"}, Help: "the whole change of this thread's branch, as a file", Run: thread.Bind((*part).cmdDiff)},
		{Name: "commit", Who: thread.Starter, Usage: []string{"commit [message]"}, Help: "commit this thread's worktree to its branch", Line: true, Run: thread.Bind((*part).cmdCommit)},
		{Name: "push", Who: thread.Starter, Usage: []string{"push"}, Help: "push this thread's branch to the remote", Run: thread.Bind((*part).cmdPush)},
		prCommand(),
	}
}

func (p *part) cmdRepo(ctx context.Context, ev adapters.Event, args []string) {
	m := p.ext.cfg.Manager
	if m == nil {
		p.t.Reply(ctx, "Repository workspaces are not available in this bot.")
		return
	}
	if len(args) == 0 {
		p.t.Reply(ctx, p.repoText(ctx))
		return
	}
	repo := args[0]
	// Who may bind is the repo setting's rule (bot admins; not where the
	// settings file manages it), checked before any git.
	if p.refuseBind(ctx, ev, repo) {
		return
	}
	if strings.EqualFold(repo, noRepo) {
		if p.bind(ctx, ev, noRepo) {
			p.t.Reply(ctx, "This channel is no longer bound to a repository: new threads work in "+text.CodeSpan(p.channelDir(ctx))+". Threads that have a worktree keep it until `new`.")
		}
		return
	}
	if _, err := settingSpec().Parse(repo); err != nil {
		p.t.Reply(ctx, "Not bound: "+err.Error())
		return
	}
	cctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	def, err := m.Check(cctx, repo)
	if err != nil {
		p.gitRefused(ctx, "check", err, false)
		p.t.Audit(ctx, ev.User.ID, "refused", "repo", workspace.Redact(repo), false)
		p.t.Reply(ctx, "Not bound: "+err.Error())
		return
	}
	if p.bind(ctx, ev, repo) {
		p.t.Reply(ctx, fmt.Sprintf("This channel works on %s (default branch %s): each new thread, and each scheduled run, gets a worktree on a branch of its own. Threads that already have a session keep their directory until `new`.",
			text.CodeSpan(workspace.Redact(repo)), text.CodeSpan(def)))
	}
}

// channelDir is the channel's working directory when it has no repository.
func (p *part) channelDir(ctx context.Context) string {
	if c, ok, err := p.t.Store().GetChannel(ctx, p.t.Ref().ChannelKey()); err == nil && ok && c.Cwd != "" {
		return c.Cwd
	}
	return p.t.Settings().Workdir
}

// cmdDiff posts the thread's whole change as a file.
func (p *part) cmdDiff(ctx context.Context, _ adapters.Event, _ []string) {
	wt, ok := p.worktree()
	if !ok {
		p.t.Reply(ctx, "This thread has no worktree: its channel is not bound to a repository, or it has not started yet.")
		return
	}
	dctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	patch, st, err := p.ext.cfg.Manager.Diff(dctx, wt)
	since := "Branch " + text.CodeSpan(wt.Branch) + " since " + text.ShortCommit(wt.Base) + ": "
	if errors.Is(err, workspace.ErrDiffTooLarge) {
		p.t.Reply(ctx, since+statText(st, 20)+"\nThe whole diff is too large to post; `commit` and `push` it to read it elsewhere.")
		return
	}
	if err != nil {
		p.gitRefused(ctx, "diff", err, false)
		p.t.Reply(ctx, "Could not make the diff: "+err.Error())
		return
	}
	if len(st.Files) == 0 {
		p.t.Reply(ctx, "No changes on branch "+text.CodeSpan(wt.Branch)+" since "+text.ShortCommit(wt.Base)+".")
		return
	}
	head := since + statText(st, 20)
	name := strings.NewReplacer("/", "-").Replace(wt.Branch) + ".diff"
	if err := p.t.PostFile(ctx, adapters.OutFile{Name: name, Data: patch}); err != nil {
		p.t.Reply(ctx, head+"\nThe diff could not be posted as a file: "+err.Error())
		return
	}
	p.t.Reply(ctx, head)
}

// cmdCommit commits the worktree; the rest of the line is the message.
func (p *part) cmdCommit(ctx context.Context, ev adapters.Event, args []string) {
	wt, ok := p.branchCommand(ctx, ev, "commit")
	if !ok {
		return
	}
	msg := strings.TrimSpace(args[0])
	if msg == "" {
		msg = "claudeops: changes from thread " + p.t.Ref().Thread
	}
	cctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	id, changed, err := p.ext.cfg.Manager.Commit(cctx, wt, msg, personOf(ev.User))
	if err != nil {
		p.gitRefused(ctx, "commit", err, false)
		p.t.Reply(ctx, "Could not commit: "+err.Error())
		return
	}
	if !changed {
		p.t.Reply(ctx, "Nothing to commit on "+text.CodeSpan(wt.Branch)+".")
		return
	}
	p.t.Audit(ctx, ev.User.ID, "commit", wt.Branch, id, true)
	p.t.Reply(ctx, "Committed "+text.ShortCommit(id)+" on "+text.CodeSpan(wt.Branch)+". `push` sends it to the remote.")
}

// cmdPush pushes the thread's branch to the remote.
func (p *part) cmdPush(ctx context.Context, ev adapters.Event, _ []string) {
	wt, ok := p.branchCommand(ctx, ev, "push")
	if !ok {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	m := p.ext.cfg.Manager
	n, err := m.Unpushed(pctx, wt)
	if err != nil {
		p.gitRefused(ctx, "unpushed", err, false)
		p.t.Reply(ctx, "Could not push: "+err.Error())
		return
	}
	if n == 0 {
		p.t.Reply(ctx, "Nothing to push: "+text.CodeSpan(wt.Branch)+" has no commits the remote lacks. `commit` first.")
		return
	}
	// From here a restart may cut the push, and only the remote can say
	// whether it happened: its record tells it at the next start.
	p.t.Settle(ctx, ev)
	if err := m.Push(pctx, wt, string(p.t.Ref().Key())); err != nil {
		p.gitRefused(ctx, "push", err, false)
		p.t.Audit(ctx, ev.User.ID, "push", wt.Branch, err.Error(), false)
		p.t.Reply(ctx, "Could not push: "+err.Error())
		return
	}
	p.t.Audit(ctx, ev.User.ID, "push", wt.Branch, "", true)
	p.t.Reply(ctx, fmt.Sprintf("Pushed %s to the remote (%d %s; what is not committed stays here).", text.CodeSpan(wt.Branch), n, text.Plural(n, "commit", "commits")))
}

// branchCommand checks that commit or push may run here, by this user.
func (p *part) branchCommand(ctx context.Context, ev adapters.Event, what string) (workspace.Worktree, bool) {
	if !p.t.MayChange(ev.User.ID) {
		p.t.RefuseChange(ctx, ev.User, what+" this thread's branch")
		return workspace.Worktree{}, false
	}
	wt, ok := p.worktree()
	if !ok {
		p.t.Reply(ctx, "This thread has no worktree: its channel is not bound to a repository, or it has not started yet.")
		return workspace.Worktree{}, false
	}
	if p.t.State().Turn != 0 {
		p.t.Reply(ctx, "Claude is working in this branch: "+what+" once the turn has ended (or `stop` it).")
		return workspace.Worktree{}, false
	}
	return wt, true
}
