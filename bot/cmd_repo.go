package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/workspace"
)

// The commands about the channel's repository and the thread's branch:
// repo, diff, commit, push.

func (w *worker) cmdRepo(ctx context.Context, ev adapters.Event, args []string) {
	if w.cfg.Workspace.Manager == nil {
		w.reply(ctx, "Repository workspaces are not available in this bot.")
		return
	}
	if len(args) == 0 {
		w.reply(ctx, w.repoText(ctx))
		return
	}
	if !w.isAdmin(ev.User.ID) {
		w.audit(ctx, ev.User.ID, "refused", "repo", workspace.Redact(args[0]), false)
		w.tell(ctx, ev.User, "Only admins can bind a repository to this channel.")
		return
	}
	repo := args[0]
	if strings.EqualFold(repo, noRepo) {
		w.saveRepo(ctx, ev, noRepo)
		w.reply(ctx, "This channel is no longer bound to a repository: new threads work in "+codeSpan(w.channelCwd(ctx))+". Threads that have a worktree keep it until `new`.")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	def, err := w.cfg.Workspace.Manager.Check(cctx, repo)
	if err != nil {
		w.gitRefused(ctx, "check", err, false)
		w.audit(ctx, ev.User.ID, "refused", "repo", workspace.Redact(repo), false)
		w.reply(ctx, "Not bound: "+err.Error())
		return
	}
	w.saveRepo(ctx, ev, repo)
	w.reply(ctx, fmt.Sprintf("This channel works on %s (default branch %s): each new thread, and each scheduled run, gets a worktree on a branch of its own. Threads that already have a session keep their directory until `new`.",
		codeSpan(workspace.Redact(repo)), codeSpan(def)))
}

// saveRepo binds the channel, keeping its other settings.
func (w *worker) saveRepo(ctx context.Context, ev adapters.Event, repo string) {
	c, _, err := w.store.GetChannel(ctx, w.ref.ChannelKey())
	if err != nil {
		w.reply(ctx, "Could not read the channel's settings: "+err.Error())
		return
	}
	c.Key, c.Repo, c.UpdatedBy, c.UpdatedAt = w.ref.ChannelKey(), repo, ev.User.ID, w.now()
	if err := w.store.SaveChannel(ctx, c); err != nil {
		w.reply(ctx, "Could not save: "+err.Error())
		return
	}
	w.audit(ctx, ev.User.ID, "repo", workspace.Redact(repo), "", true)
}

// repoText says what the channel and the thread work on.
func (w *worker) repoText(ctx context.Context) string {
	repo := w.repo(ctx)
	s := "This channel is not bound to a repository; an admin can bind one with `repo <path or clone URL>`."
	if repo != "" {
		s = "This channel works on " + codeSpan(workspace.Redact(repo)) + "."
	}
	if wt, ok := w.worktree(); ok {
		s += "\nThis thread: branch " + codeSpan(wt.Branch) + " (from " + shortCommit(wt.Base) + ") in " + codeSpan(wt.Path) + "."
	}
	return s
}

// cmdDiff posts the thread's whole change as a file.
func (w *worker) cmdDiff(ctx context.Context, _ adapters.Event, _ []string) {
	wt, ok := w.worktree()
	if !ok {
		w.reply(ctx, "This thread has no worktree: its channel is not bound to a repository, or it has not started yet.")
		return
	}
	dctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	patch, st, err := w.cfg.Workspace.Manager.Diff(dctx, wt)
	if errors.Is(err, workspace.ErrDiffTooLarge) {
		w.reply(ctx, "Branch "+codeSpan(wt.Branch)+" since "+shortCommit(wt.Base)+": "+statText(st, 20)+"\nThe whole diff is too large to post; `commit` and `push` it to read it elsewhere.")
		return
	}
	if err != nil {
		w.gitRefused(ctx, "diff", err, false)
		w.reply(ctx, "Could not make the diff: "+err.Error())
		return
	}
	if len(st.Files) == 0 {
		w.reply(ctx, "No changes on branch "+codeSpan(wt.Branch)+" since "+shortCommit(wt.Base)+".")
		return
	}
	head := "Branch " + codeSpan(wt.Branch) + " since " + shortCommit(wt.Base) + ": " + statText(st, 20)
	name := strings.NewReplacer("/", "-").Replace(wt.Branch) + ".diff"
	if err := w.face.PostFile(ctx, adapters.OutFile{Name: name, Data: patch}); err != nil {
		w.reply(ctx, head+"\nThe diff could not be posted as a file: "+err.Error())
		return
	}
	w.reply(ctx, head)
}

// cmdCommit commits the worktree; the rest of the line is the message.
func (w *worker) cmdCommit(ctx context.Context, ev adapters.Event, args []string) {
	rest := args[0]
	wt, ok := w.branchCommand(ctx, ev, "commit")
	if !ok {
		return
	}
	msg := strings.TrimSpace(rest)
	if msg == "" {
		msg = "claudeops: changes from thread " + w.ref.Thread
	}
	cctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	id, changed, err := w.cfg.Workspace.Manager.Commit(cctx, wt, msg, personOf(ev.User))
	if err != nil {
		w.gitRefused(ctx, "commit", err, false)
		w.reply(ctx, "Could not commit: "+err.Error())
		return
	}
	if !changed {
		w.reply(ctx, "Nothing to commit on "+codeSpan(wt.Branch)+".")
		return
	}
	w.audit(ctx, ev.User.ID, "commit", wt.Branch, id, true)
	w.reply(ctx, "Committed "+shortCommit(id)+" on "+codeSpan(wt.Branch)+". `push` sends it to the remote.")
}

// cmdPush pushes the thread's branch to the remote.
func (w *worker) cmdPush(ctx context.Context, ev adapters.Event, _ []string) {
	wt, ok := w.branchCommand(ctx, ev, "push")
	if !ok {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	m := w.cfg.Workspace.Manager
	n, err := m.Unpushed(pctx, wt)
	if err != nil {
		w.gitRefused(ctx, "unpushed", err, false)
		w.reply(ctx, "Could not push: "+err.Error())
		return
	}
	if n == 0 {
		w.reply(ctx, "Nothing to push: "+codeSpan(wt.Branch)+" has no commits the remote lacks. `commit` first.")
		return
	}
	if err := m.Push(pctx, wt); err != nil {
		w.gitRefused(ctx, "push", err, false)
		w.audit(ctx, ev.User.ID, "push", wt.Branch, err.Error(), false)
		w.reply(ctx, "Could not push: "+err.Error())
		return
	}
	w.audit(ctx, ev.User.ID, "push", wt.Branch, "", true)
	w.reply(ctx, fmt.Sprintf("Pushed %s to the remote (%d %s; what is not committed stays here).", codeSpan(wt.Branch), n, plural(n, "commit", "commits")))
}

// branchCommand checks that commit or push may run here, by this user.
func (w *worker) branchCommand(ctx context.Context, ev adapters.Event, what string) (workspace.Worktree, bool) {
	if !w.mayChange(ev.User.ID) {
		w.refuseChange(ctx, ev.User, what+" this thread's branch")
		return workspace.Worktree{}, false
	}
	wt, ok := w.worktree()
	if !ok {
		w.reply(ctx, "This thread has no worktree: its channel is not bound to a repository, or it has not started yet.")
		return workspace.Worktree{}, false
	}
	if w.view.running() {
		w.reply(ctx, "Claude is working in this branch: "+what+" once the turn has ended (or `stop` it).")
		return workspace.Worktree{}, false
	}
	return wt, true
}

// personOf is the commit author for a chat user.
func personOf(u adapters.User) workspace.Person {
	name := strings.TrimSpace(u.Name)
	if name == "" {
		name = u.ID
	}
	return workspace.Person{Name: name, Email: strings.Map(emailRune, u.ID) + "@claudeops.invalid"}
}

func emailRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
		return r
	}
	return '_'
}

// releaseWorktree removes the thread's worktree (its session has ended) and
// says what became of its branch.
func (w *worker) releaseWorktree(ctx context.Context, why string) {
	wt, ok := w.worktree()
	if !ok {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	kept, err := w.cfg.Workspace.Manager.Remove(rctx, wt)
	if err != nil {
		w.log.Error("remove worktree", "path", wt.Path, "err", err)
		w.gitRefused(ctx, "remove", err, false)
		w.reply(ctx, "The worktree of "+codeSpan(wt.Branch)+" could not be removed: "+err.Error())
		return
	}
	w.thread.Worktree, w.wsSnap = "", ""
	w.saveThread(ctx)
	msg := why + ": its worktree was removed, and the branch " + codeSpan(wt.Branch)
	if kept {
		msg += " was kept: it has commits the remote does not have (uncommitted work was committed to it first)."
	} else {
		msg += " with it, as the remote has all of it."
	}
	w.reply(ctx, msg)
}

// channelCwd is the channel's working directory when it has no repository.
func (w *worker) channelCwd(ctx context.Context) string {
	if c, ok, err := w.store.GetChannel(ctx, w.ref.ChannelKey()); err == nil && ok && c.Cwd != "" {
		return c.Cwd
	}
	return w.defaultCwd()
}
