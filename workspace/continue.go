package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrBusy is a branch Continue will not take: its worktree is still there
// (another thread works in it), or the clone's copy of it has commits the
// remote lacks.
var ErrBusy = errors.New("workspace: branch in use")

// Continue fetches repo and adds a worktree on branch, one of the bot's
// (BranchPrefix) that the remote has, at the remote's tip: work goes on
// where an earlier worktree's push left it, so the next push is a
// fast-forward (Push never forces). Base is that tip, so that Diff,
// Changes and Unpushed speak of this worktree's own work. It refuses a
// branch outside BranchPrefix (ErrBadWorktree), one the remote lacks
// (ErrGone), and one still checked out in a worktree or whose local copy
// the remote lacks commits of (ErrBusy). A local copy behind the remote
// (an earlier worktree's branch, kept) is moved to the remote's tip.
func (m *Manager) Continue(ctx context.Context, repo, branch string) (Worktree, error) {
	comp, ok := strings.CutPrefix(branch, BranchPrefix)
	if !ok || !validComponent().MatchString(comp) {
		return Worktree{}, fmt.Errorf("%w: continue %q: not a branch of the bot's", ErrBadWorktree, branch)
	}
	r, _, unlock, err := m.synced(ctx, repo)
	if err != nil {
		return Worktree{}, err
	}
	defer unlock()
	remote := "refs/remotes/origin/" + branch
	if ok, err := m.refExists(ctx, r, remote); err != nil {
		return Worktree{}, fmt.Errorf("continue %s: %w", branch, err)
	} else if !ok {
		return Worktree{}, fmt.Errorf("continue %s: the remote has no such branch: %w", branch, ErrGone)
	}
	tip, err := m.revParse(ctx, r, remote+"^{commit}")
	if err != nil {
		return Worktree{}, fmt.Errorf("continue %s: %w", branch, err)
	}
	wt := Worktree{Repo: repo, Path: filepath.Join(r.trees, comp), Branch: branch, Base: tip}
	if err := m.freeToContinue(ctx, r, wt); err != nil {
		return Worktree{}, err
	}
	if err := os.MkdirAll(r.trees, 0o700); err != nil {
		return Worktree{}, fmt.Errorf("continue %s: %w", branch, err)
	}
	// -B: the local copy, if any, is at most behind the remote (checked).
	if _, err := m.run(ctx, gitCall{repo: r, slow: true, args: []string{
		"worktree", "add", "--quiet", "--no-track", "-B", wt.Branch, wt.Path, tip,
	}}); err != nil {
		_ = removeTree(wt.Path)
		_, _ = m.run(context.WithoutCancel(ctx), gitCall{repo: r, args: []string{"worktree", "prune"}})
		return Worktree{}, fmt.Errorf("continue %s of %s: %w", wt.Branch, Redact(repo), err)
	}
	m.log.Info("worktree continues a branch", "repo", Redact(repo), "branch", wt.Branch, "base", tip)
	return wt, nil
}

// freeToContinue checks that no worktree holds wt's branch or place and
// that the clone's copy of the branch, if any, is an ancestor of Base.
// The caller holds the clone's lock.
func (m *Manager) freeToContinue(ctx context.Context, r *repoRef, wt Worktree) error {
	if _, err := os.Lstat(wt.Path); err == nil {
		return fmt.Errorf("continue %s: %w: its worktree is still there", wt.Branch, ErrBusy)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("continue %s: %w", wt.Branch, err)
	}
	// A worktree removed by hand (or by a crash) leaves its record, which
	// would hold the branch.
	if _, err := m.run(ctx, gitCall{repo: r, args: []string{"worktree", "prune"}}); err != nil {
		return fmt.Errorf("continue %s: %w", wt.Branch, err)
	}
	local := "refs/heads/" + wt.Branch
	ok, err := m.refExists(ctx, r, local)
	if err != nil || !ok {
		return err
	}
	_, err = m.run(ctx, gitCall{repo: r, args: []string{"merge-base", "--is-ancestor", local, wt.Base}})
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return fmt.Errorf("continue %s: %w: the clone's copy has commits the remote lacks", wt.Branch, ErrBusy)
	case err != nil:
		return fmt.Errorf("continue %s: %w", wt.Branch, err)
	}
	return nil
}
