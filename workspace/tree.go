package workspace

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// removalMessage is the commit that keeps a removed worktree's last changes.
const removalMessage = "claudeops: uncommitted work kept when the worktree was removed"

// Create fetches repo (cloning it once into Dir on first use) and adds a
// new worktree on a new branch "claudeops/<name>" (name sanitized to a
// valid, short ref component; made unique with a suffix if the branch,
// locally or on the remote, or the directory exists) from the remote's
// default branch. Concurrent Creates of one repo are safe: they take turns.
func (m *Manager) Create(ctx context.Context, repo, name string) (Worktree, error) {
	r, def, unlock, err := m.synced(ctx, repo)
	if err != nil {
		return Worktree{}, err
	}
	defer unlock()
	base, err := m.revParse(ctx, r, "refs/remotes/origin/"+def+"^{commit}")
	if err != nil {
		return Worktree{}, err
	}
	comp, err := m.freeName(ctx, r, component(name))
	if err != nil {
		return Worktree{}, err
	}
	if err := os.MkdirAll(r.trees, 0o700); err != nil {
		return Worktree{}, fmt.Errorf("create worktree: %w", err)
	}
	wt := Worktree{Repo: repo, Path: filepath.Join(r.trees, comp), Branch: BranchPrefix + comp, Base: base}
	if _, err := m.run(ctx, gitCall{repo: r, slow: true, args: []string{
		"worktree", "add", "--quiet", "--no-track", "-b", wt.Branch, wt.Path, base,
	}}); err != nil {
		// git may have made the branch before failing the checkout.
		_, _ = m.run(context.WithoutCancel(ctx), gitCall{repo: r, args: []string{"update-ref", "-d", "refs/heads/" + wt.Branch, base}})
		_ = removeTree(wt.Path)
		_, _ = m.run(context.WithoutCancel(ctx), gitCall{repo: r, args: []string{"worktree", "prune"}})
		return Worktree{}, fmt.Errorf("add worktree %s of %s: %w", wt.Branch, Redact(repo), err)
	}
	m.log.Info("worktree created", "repo", Redact(repo), "branch", wt.Branch, "base", base)
	return wt, nil
}

// freeName is comp, or comp with the first suffix "-2", "-3"… that no
// branch (local or the remote's) and no directory uses yet.
func (m *Manager) freeName(ctx context.Context, r *repoRef, comp string) (string, error) {
	out, err := m.run(ctx, gitCall{repo: r, args: []string{
		"for-each-ref", "--format=%(refname)", "refs/heads/" + BranchPrefix, "refs/remotes/origin/" + BranchPrefix,
	}})
	if err != nil {
		return "", fmt.Errorf("list branches: %w", err)
	}
	taken := map[string]bool{}
	for ref := range strings.Lines(string(out)) {
		ref = strings.TrimSuffix(ref, "\n")
		ref = strings.TrimPrefix(strings.TrimPrefix(ref, "refs/heads/"), "refs/remotes/origin/")
		taken[strings.TrimPrefix(ref, BranchPrefix)] = true
	}
	entries, _ := os.ReadDir(r.trees)
	for _, e := range entries {
		taken[e.Name()] = true
	}
	for i := 1; ; i++ {
		c := comp
		if i > 1 {
			c = comp + "-" + strconv.Itoa(i)
		}
		if !taken[c] {
			return c, nil
		}
	}
}

// Check validates a repo argument without keeping anything new beyond the
// clone: clones or fetches it and returns its default branch.
func (m *Manager) Check(ctx context.Context, repo string) (defaultBranch string, err error) {
	_, def, unlock, err := m.synced(ctx, repo)
	if err != nil {
		return "", err
	}
	unlock()
	return def, nil
}

// synced takes repo's clone lock and fetches it (cloning it once):
// the clone, its default branch, and the unlock the caller must call
// (on no error) once done with the clone.
func (m *Manager) synced(ctx context.Context, repo string) (r *repoRef, def string, unlock func(), err error) {
	if r, err = m.repoRef(repo); err != nil {
		return nil, "", nil, err
	}
	if unlock, err = m.lock(ctx, r.key); err != nil {
		return nil, "", nil, err
	}
	if def, err = m.sync(ctx, r); err != nil {
		unlock()
		return nil, "", nil, err
	}
	return r, def, unlock, nil
}

// open validates wt against this manager: its repo, a path directly in
// that repo's trees directory, the branch named for it, an object id as
// Base. It does no I/O.
func (m *Manager) open(wt Worktree) (*repoRef, error) {
	r, err := m.repoRef(wt.Repo)
	if err != nil {
		return nil, err
	}
	comp := filepath.Base(wt.Path)
	if wt.Path != filepath.Join(r.trees, comp) || !validComponent().MatchString(comp) ||
		wt.Branch != BranchPrefix+comp || !isObjectID(wt.Base) {
		return nil, fmt.Errorf("%w: %s", ErrBadWorktree, wt.Path)
	}
	return r, nil
}

// treeDir says whether wt.Path is a directory (not a link planted in
// its place) and fails with ErrGone when it is missing.
func treeDir(wt Worktree) error {
	fi, err := os.Lstat(wt.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", ErrGone, wt.Path)
	case err != nil:
		return fmt.Errorf("worktree %s: %w", wt.Path, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrBadWorktree, wt.Path)
	}
	return nil
}

// adminDir finds the worktree's administrative directory in the clone
// (where its index is) by what git wrote there — never by the worktree's
// own ".git" file, which the worktree's content may have rewritten.
// It is "" when there is none.
func adminDir(r *repoRef, wt Worktree) string {
	want := []byte(wt.Path + "/.git")
	match := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "gitdir"))
		return err == nil && bytes.Equal(bytes.TrimRight(b, "\n"), want)
	}
	if d := filepath.Join(r.clone, "worktrees", filepath.Base(wt.Path)); match(d) {
		return d
	}
	entries, _ := os.ReadDir(filepath.Join(r.clone, "worktrees"))
	for _, e := range entries {
		if d := filepath.Join(r.clone, "worktrees", e.Name()); match(d) {
			return d
		}
	}
	return ""
}

// Remove removes the worktree directory. Uncommitted changes are first
// committed to the branch (removalMessage) so nothing is lost; the branch
// is then deleted unless it has unpushed commits, in which case kept is
// true. Removing an already removed worktree is not an error, and a
// removal a crash interrupted is finished.
func (m *Manager) Remove(ctx context.Context, wt Worktree) (kept bool, err error) {
	r, err := m.open(wt)
	if err != nil {
		return false, err
	}
	unlock, err := m.lock(ctx, r.key)
	if err != nil {
		return false, err
	}
	defer unlock()
	admin := adminDir(r, wt)
	fi, statErr := os.Lstat(wt.Path)
	switch {
	case statErr == nil && fi.IsDir():
		if _, _, err := m.commit(ctx, r, wt, admin, removalMessage, m.author); err != nil {
			return false, fmt.Errorf("keep the work of %s: %w", wt.Branch, err)
		}
		if err := m.discard(r, wt.Path); err != nil {
			return false, err
		}
	case statErr == nil: // a link or file in the worktree's place: never followed
		if err := os.Remove(wt.Path); err != nil {
			return false, fmt.Errorf("remove %s: %w", wt.Path, err)
		}
	case !errors.Is(statErr, fs.ErrNotExist):
		return false, fmt.Errorf("remove %s: %w", wt.Path, statErr)
	}
	if err := m.emptyTrash(r); err != nil {
		return false, err
	}
	if admin != "" {
		if err := os.RemoveAll(admin); err != nil {
			return false, fmt.Errorf("remove %s: %w", admin, err)
		}
	}
	return m.dropBranch(ctx, r, wt)
}

// discard moves a worktree out of its place at once, so that a crash
// never leaves half a tree to be committed as deletions; emptyTrash
// deletes it.
func (m *Manager) discard(r *repoRef, path string) error {
	if err := os.Rename(path, filepath.Join(r.trees, ".trash-"+randomHex(8))); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// emptyTrash deletes what removals of the clone's worktrees moved aside,
// a crash's leftovers included. The caller holds the clone's lock.
func (m *Manager) emptyTrash(r *repoRef) error {
	leftovers, _ := filepath.Glob(filepath.Join(r.trees, ".trash-*"))
	for _, t := range leftovers {
		if err := removeTree(t); err != nil {
			return fmt.Errorf("remove %s: %w", t, err)
		}
	}
	return nil
}

// dropBranch deletes the branch unless the remote lacks some of its
// commits; kept says it stayed.
func (m *Manager) dropBranch(ctx context.Context, r *repoRef, wt Worktree) (kept bool, err error) {
	ref := "refs/heads/" + wt.Branch
	tip, err := m.revParse(ctx, r, ref)
	if errors.Is(err, ErrTampered) {
		return false, err
	}
	if err != nil {
		return false, nil // already deleted
	}
	n, err := m.unpushed(ctx, r, wt)
	if err != nil {
		return false, err
	}
	if n > 0 {
		m.log.Info("worktree removed, branch kept", "repo", Redact(wt.Repo), "branch", wt.Branch, "unpushed", n)
		return true, nil
	}
	if _, err := m.run(ctx, gitCall{repo: r, args: []string{"update-ref", "-d", ref, tip}}); err != nil {
		return false, fmt.Errorf("delete branch %s: %w", wt.Branch, err)
	}
	m.log.Info("worktree removed", "repo", Redact(wt.Repo), "branch", wt.Branch)
	return false, nil
}

// removeTree deletes dir and everything in it, links as links; when a
// read-only directory (e.g. a Go module cache) stops it, it makes the
// directories writable and tries once more.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() { // WalkDir reports a link as a link, never its target
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
