package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/workspace"
)

// WorkspaceConfig binds channels to repositories: each thread of a bound
// channel, and each scheduled run, works in a git worktree of its own.
type WorkspaceConfig struct {
	// Manager keeps the clones and worktrees; nil: no channel can be bound.
	Manager Workspaces
	// Repos binds channels by configuration (channel key → repository);
	// a binding made with `repo` wins.
	Repos map[string]string
	// TTL: a thread idle this long loses its worktree (default 7 days).
	TTL time.Duration
	// Sweep is how often idle worktrees are looked for (default: an hour,
	// or TTL/4 when that is shorter).
	Sweep time.Duration
}

func (c *WorkspaceConfig) defaults() {
	if c.TTL <= 0 {
		c.TTL = 7 * 24 * time.Hour
	}
	if c.Sweep <= 0 {
		c.Sweep = min(time.Hour, c.TTL/4)
	}
}

// Workspaces is what the bot needs of the repository workspaces;
// *workspace.Manager is it. Every method runs git on the host, on content
// the model wrote: the implementation must not let that content run
// anything (see package workspace).
type Workspaces interface {
	// Check clones or fetches repo and returns its default branch.
	Check(ctx context.Context, repo string) (string, error)
	// Create makes a worktree on a new branch claudeops/<name>, from the
	// repository's default branch after a fetch.
	Create(ctx context.Context, repo, name string) (workspace.Worktree, error)
	// Snapshot names the worktree's content as it is now.
	Snapshot(ctx context.Context, wt workspace.Worktree) (string, error)
	// Changes is the stat between two snapshots (or Base and a snapshot).
	Changes(ctx context.Context, wt workspace.Worktree, from, to string) (workspace.Stat, error)
	// Diff is the whole change since Base, committed or not.
	Diff(ctx context.Context, wt workspace.Worktree) ([]byte, workspace.Stat, error)
	// Commit commits everything; changed is false when there was nothing.
	Commit(ctx context.Context, wt workspace.Worktree, message string, by workspace.Person) (commit string, changed bool, err error)
	// Push pushes the branch to the remote's branch of the same name.
	Push(ctx context.Context, wt workspace.Worktree) error
	// Unpushed counts the branch's commits the remote does not have.
	Unpushed(ctx context.Context, wt workspace.Worktree) (int, error)
	// Remove removes the worktree (committing what is uncommitted first)
	// and the branch unless it has unpushed commits (kept).
	Remove(ctx context.Context, wt workspace.Worktree) (kept bool, err error)
	// DiskUsage is the bytes the workspaces use.
	DiskUsage(ctx context.Context) (int64, error)
}

// noRepo is stored by `repo none`: the channel is unbound even if the
// configuration binds it.
const noRepo = "none"

// gitTimeout bounds the quick git calls made on a worker's path
// (snapshots, stats); clones, fetches and pushes get gitLongTimeout.
const (
	gitTimeout     = time.Minute
	gitLongTimeout = 10 * time.Minute
)

// repo is the repository the thread's channel is bound to ("" for none).
func (w *worker) repo(ctx context.Context) string {
	if w.cfg.Workspace.Manager == nil {
		return ""
	}
	if c, ok, err := w.store.GetChannel(ctx, w.ref.ChannelKey()); err == nil && ok && c.Repo != "" {
		if c.Repo == noRepo {
			return ""
		}
		return c.Repo
	}
	return w.cfg.Workspace.Repos[w.ref.ChannelKey()]
}

// worktree is the thread's worktree, if it has one.
func (w *worker) worktree() (workspace.Worktree, bool) {
	if w.thread.Worktree == "" || w.cfg.Workspace.Manager == nil {
		return workspace.Worktree{}, false
	}
	return workspace.Worktree{Repo: w.thread.Repo, Path: w.thread.Worktree, Branch: w.thread.Branch, Base: w.thread.BaseCommit}, true
}

// ensureWorkspace gives the thread its worktree before claude starts, in a
// channel bound to a repository: the session's working directory.
func (w *worker) ensureWorkspace(ctx context.Context) error {
	if wt, ok := w.worktree(); ok {
		if _, err := os.Stat(wt.Path); err == nil {
			w.initSnapshot(ctx, wt)
			return nil
		}
		w.log.Warn("worktree missing; making a new one", "path", wt.Path)
		w.thread.Worktree = ""
	}
	repo := w.repo(ctx)
	if repo == "" {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	wt, err := w.cfg.Workspace.Manager.Create(cctx, repo, w.branchName())
	if err != nil {
		w.gitRefused(ctx, "create", err, false)
		return fmt.Errorf("prepare a worktree of %s: %w", repo, err)
	}
	earlier := w.thread.Branch
	w.thread.Repo, w.thread.Worktree, w.thread.Branch, w.thread.BaseCommit = wt.Repo, wt.Path, wt.Branch, wt.Base
	msg := fmt.Sprintf("Working on branch %s of %s (from %s).", codeSpan(wt.Branch), codeSpan(workspace.Redact(repo)), shortCommit(wt.Base))
	if w.thread.SessionID != "" {
		// The CLI keeps sessions by directory: a new one cannot resume.
		w.thread.SessionID = ""
		msg += " This thread's earlier worktree is gone, so Claude starts a fresh conversation here"
		if earlier != "" {
			msg += " (the earlier branch " + codeSpan(earlier) + " was kept if it had unpushed commits)"
		}
		msg += "."
	}
	w.saveThread(ctx)
	w.wsSnap = ""
	w.initSnapshot(ctx, wt)
	w.reply(ctx, msg)
	return nil
}

// initSnapshot records what the worktree holds before the next turn, so
// that its end can say what the turn changed.
func (w *worker) initSnapshot(ctx context.Context, wt workspace.Worktree) {
	if w.wsSnap != "" {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	snap, err := w.cfg.Workspace.Manager.Snapshot(sctx, wt)
	if err != nil {
		w.log.Warn("snapshot worktree", "err", err)
		w.gitRefused(ctx, "snapshot", err, true)
		return
	}
	w.wsSnap = snap
}

// gitRefused audits a workspace call refused because the clone's git
// configuration had been changed outside the bot (by a session: see
// package workspace), telling the thread too unless the caller does; it
// says whether err was that.
func (w *worker) gitRefused(ctx context.Context, op string, err error, tell bool) bool {
	if !errors.Is(err, workspace.ErrTampered) {
		return false
	}
	w.audit(ctx, "bot", "refused", "git "+op, err.Error(), false)
	if tell {
		w.reply(ctx, "⚠️ The bot's git refused to work in this repository: "+err.Error())
	}
	return true
}

// branchName is the short name of the thread's branch: the schedule and
// slot for a scheduled run, else the thread's own id, made short.
func (w *worker) branchName() string {
	if w.schedRun != nil {
		return fmt.Sprintf("schedule-%d-%s", w.schedRun.schedule.ID, w.schedRun.slot.UTC().Format("20060102-1504"))
	}
	return "thread-" + shortThreadName(w.ref.Thread)
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

// afterTurnChanges tells the thread what the turn just ended changed in
// its worktree, if anything.
func (w *worker) afterTurnChanges(ctx context.Context) {
	wt, ok := w.worktree()
	if !ok {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	m := w.cfg.Workspace.Manager
	snap, err := m.Snapshot(sctx, wt)
	if err != nil {
		w.log.Warn("snapshot worktree", "err", err)
		w.gitRefused(ctx, "snapshot", err, true)
		return
	}
	from := w.wsSnap
	if from == "" {
		from = wt.Base
	}
	if snap == from {
		return
	}
	st, err := m.Changes(sctx, wt, from, snap)
	w.wsSnap = snap
	if err != nil {
		w.log.Warn("changes of the turn", "err", err)
		w.gitRefused(ctx, "changes", err, true)
		return
	}
	if len(st.Files) == 0 {
		return
	}
	w.reply(ctx, "📝 "+statText(st, 8)+"\n`diff` shows the whole change of branch "+codeSpan(wt.Branch)+".")
}

// statText is a compact summary of a stat: the totals, then up to max
// files with their lines added and removed.
func statText(st workspace.Stat, max int) string {
	n := len(st.Files)
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s changed, +%d −%d", n, plural(n, "file", "files"), st.Added, st.Removed)
	for i, f := range st.Files {
		if i == max {
			fmt.Fprintf(&b, "\n• … and %d more", n-max)
			break
		}
		if f.Binary {
			fmt.Fprintf(&b, "\n• %s (binary)", codeSpan(f.Path))
			continue
		}
		fmt.Fprintf(&b, "\n• %s +%d −%d", codeSpan(f.Path), f.Added, f.Removed)
	}
	return b.String()
}

// codeSpan shows untrusted text (a path the model chose) as inline code
// that nothing inside can end early: hidden characters escaped, newlines
// shown as \n, the fence longer than any run of backticks inside, cut to a
// readable length.
func codeSpan(s string) string {
	s = strings.ReplaceAll(adapters.Visible(shorten(s, 200)), "\n", `\n`)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// shortCommit is the short form of a commit id.
func shortCommit(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}
