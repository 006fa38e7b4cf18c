package workspaces

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/workspace"
)

// part is the extension's part in one thread. Its hooks run on the
// thread's worker.
type part struct {
	ext *Extension
	t   thread.Thread
	// snap names the worktree's content when the turn began (or after the
	// last summary), so a turn's end can say what it changed.
	snap string
	// cont is the pull request whose branch the worktree continues (nil:
	// none); noPR why a --pr run's pull request is not to be opened
	// (its branch could not be continued).
	cont *continued
	noPR string
}

var (
	_ thread.Preparer  = (*part)(nil)
	_ thread.TurnEnder = (*part)(nil)
	_ thread.Ender     = (*part)(nil)
	_ thread.Receiver  = (*part)(nil)
	_ thread.Statuser  = (*part)(nil)
)

// worktree is the thread's worktree, if it has one.
func (p *part) worktree() (workspace.Worktree, bool) {
	r := p.t.Record()
	if r.Worktree == "" || p.ext.cfg.Manager == nil {
		return workspace.Worktree{}, false
	}
	return workspace.Worktree{Repo: r.Repo, Path: r.Worktree, Branch: r.Branch, Base: r.BaseCommit}, true
}

// Prepare gives the thread its worktree before claude starts, in a channel
// bound to a repository: the session's working directory.
func (p *part) Prepare(ctx context.Context) error {
	if wt, ok := p.worktree(); ok {
		if _, err := os.Stat(wt.Path); err == nil {
			p.initSnapshot(ctx, wt)
			return nil
		}
		p.t.Log().Warn("worktree missing; making a new one", "path", wt.Path)
		p.t.SetWorkspace(ctx, thread.Workspace{Repo: wt.Repo, Branch: wt.Branch, Base: wt.Base})
	}
	repo := p.ext.Repo(ctx, p.t.Ref().ChannelKey())
	if repo == "" {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	wt, said, err := p.makeWorktree(cctx, repo)
	if err != nil {
		p.gitRefused(ctx, "create", err, false)
		return fmt.Errorf("prepare a worktree of %s: %w", repo, err)
	}
	before := p.t.Record()
	p.t.SetWorkspace(ctx, thread.Workspace{Repo: wt.Repo, Path: wt.Path, Branch: wt.Branch, Base: wt.Base})
	msg := said
	if msg == "" {
		msg = fmt.Sprintf("Working on branch %s of %s (from %s).", text.CodeSpan(wt.Branch), text.CodeSpan(workspace.Redact(repo)), text.ShortCommit(wt.Base))
	}
	if before.SessionID != "" {
		// The CLI keeps sessions by directory: a new one cannot resume.
		msg += " This thread's earlier worktree is gone, so Claude starts a fresh conversation here"
		if before.Branch != "" {
			msg += " (the earlier branch " + text.CodeSpan(before.Branch) + " was kept if it had unpushed commits)"
		}
		msg += "."
	}
	p.snap = ""
	p.initSnapshot(ctx, wt)
	p.t.Reply(ctx, msg)
	return nil
}

// initSnapshot records what the worktree holds before the next turn, so
// that its end can say what the turn changed.
func (p *part) initSnapshot(ctx context.Context, wt workspace.Worktree) {
	if p.snap != "" {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	snap, err := p.ext.cfg.Manager.Snapshot(sctx, wt)
	if err != nil {
		p.t.Log().Warn("snapshot worktree", "err", err)
		p.gitRefused(ctx, "snapshot", err, true)
		return
	}
	p.snap = snap
}

// gitRefused audits a workspace call refused because the clone's git
// configuration had been changed outside the bot (by a session: see
// package workspace), telling the thread too unless the caller does; it
// says whether err was that.
func (p *part) gitRefused(ctx context.Context, op string, err error, tell bool) bool {
	if !errors.Is(err, workspace.ErrTampered) {
		return false
	}
	p.t.Audit(ctx, "bot", "refused", "git "+op, err.Error(), false)
	if tell {
		p.t.Reply(ctx, "⚠️ The bot's git refused to work in this repository: "+err.Error())
	}
	return true
}

// branchName is the short name of the thread's branch: the schedule and
// slot for a scheduled run, the trigger and the thread for a trigger's
// (its runs have no slot: each its own branch), else the thread's own id,
// made short.
func (p *part) branchName() string {
	r, ok := p.t.Run()
	switch {
	case ok && r.Trigger != "":
		return "trigger-" + r.Trigger + "-" + shortThreadName(p.t.Ref().Thread)
	case ok:
		return fmt.Sprintf("schedule-%d-%s", r.Schedule.ID, r.Slot.UTC().Format("20060102-1504"))
	}
	return "thread-" + shortThreadName(p.t.Ref().Thread)
}

// shortThreadName is a few characters of a thread id that read as its
// name (a console thread's name, the end of a Slack ts) plus a hash, so
// that different threads never share a name.
func shortThreadName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if len(s) > 12 {
		s = s[len(s)-12:]
	}
	sum := sha256.Sum256([]byte(id))
	h := hex.EncodeToString(sum[:3])
	if s == "" {
		return h
	}
	return strings.ToLower(s) + "-" + h
}

// AfterTurn tells the thread what the turn changed in its worktree and,
// for a scheduled run, names the run's branch and pushes it when asked.
func (p *part) AfterTurn(ctx context.Context, e *thread.TurnEnd) {
	p.afterTurnChanges(ctx)
	if r, ok := p.t.Run(); ok {
		p.runBranch(ctx, r, e)
	}
}

// OnEnd: `new` ended the conversation; the worktree goes with it.
func (p *part) OnEnd(ctx context.Context) { p.release(ctx, "This thread's session ended") }

// Receive takes the sweep's reclaim, and a push cut off by a restart.
func (p *part) Receive(ctx context.Context, msg any) {
	switch msg := msg.(type) {
	case reclaim:
		p.reclaimIdle(ctx)
	case cutPush:
		p.tellCut(ctx, msg.c)
	case handOver:
		p.handOverBranch(ctx, msg)
	}
}

// afterTurnChanges tells the thread what the turn just ended changed in
// its worktree, if anything.
func (p *part) afterTurnChanges(ctx context.Context) {
	wt, ok := p.worktree()
	if !ok {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	m := p.ext.cfg.Manager
	snap, err := m.Snapshot(sctx, wt)
	if err != nil {
		p.t.Log().Warn("snapshot worktree", "err", err)
		p.gitRefused(ctx, "snapshot", err, true)
		return
	}
	from := p.snap
	if from == "" {
		from = wt.Base
	}
	if snap == from {
		return
	}
	st, err := m.Changes(sctx, wt, from, snap)
	p.snap = snap
	if err != nil {
		p.t.Log().Warn("changes of the turn", "err", err)
		p.gitRefused(ctx, "changes", err, true)
		return
	}
	if len(st.Files) == 0 {
		return
	}
	p.t.Reply(ctx, "📝 "+statText(st, 8)+"\n`diff` shows the whole change of branch "+text.CodeSpan(wt.Branch)+".")
}

// statText is a compact summary of a stat: the totals, then up to max
// files with their lines added and removed.
func statText(st workspace.Stat, max int) string {
	n := len(st.Files)
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s changed, +%d −%d", n, text.Plural(n, "file", "files"), st.Added, st.Removed)
	for i, f := range st.Files {
		if i == max {
			fmt.Fprintf(&b, "\n• … and %d more", n-max)
			break
		}
		if f.Binary {
			fmt.Fprintf(&b, "\n• %s (binary)", text.CodeSpan(f.Path))
			continue
		}
		fmt.Fprintf(&b, "\n• %s +%d −%d", text.CodeSpan(f.Path), f.Added, f.Removed)
	}
	return b.String()
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
