package workspace

import (
	"fmt"
	"os"
	"path/filepath"
)

// A SessionDir is a part of a clone that a session working in one of its
// worktrees must see for its own git to work there (status, diff, log,
// add, commit, checkout -b, rebase, branch -d): the worktree's ".git" file
// leads to the clone.
type SessionDir struct {
	// Path is a directory, or a file when Readable.
	Path   string
	Access DirAccess
}

// DirAccess is how a session sees a SessionDir.
type DirAccess int

const (
	// Readable: its content, unwritable, and it cannot be removed or
	// replaced (a mount point).
	Readable DirAccess = iota
	// Writable: its content, writable.
	Writable
	// Hidden: an empty directory in its place (what lies inside it and
	// is listed too still shows), which cannot be removed or replaced.
	Hidden
)

// SessionDirs is what of wt's clone a runner that shows a session nothing
// else (a sandbox, a container) must show it, nested (a part inside
// another lies over it):
//
//   - the clone writable, as git needs its directory to write packed-refs
//     (a branch deleted, a rebase), but over it, readable and fixed in
//     place, what the bot reads as its own: config and config.lock, HEAD,
//     info/ (attributes, exclude) and objects/info/ (alternates);
//   - hooks/ hidden, made if missing (a hook planted there would run in
//     every other session's git);
//   - worktrees/ hidden but for wt's own administrative directory,
//     writable (its HEAD, index, reflog): no other thread's index or HEAD
//     is reachable.
//
// A file a session adds beside the config that git would read as
// configuration (commondir, config.worktree) the bot's next git call
// refuses and removes, as under the local runner; the rest is data: one
// session can write objects, move another thread's branch in the same
// clone or leave files such as shallow, as under the local runner.
func (m *Manager) SessionDirs(wt Worktree) ([]SessionDir, error) {
	r, err := m.open(wt)
	if err != nil {
		return nil, err
	}
	admin := adminDir(r, wt)
	if admin == "" {
		return nil, fmt.Errorf("%w: %s has no administrative directory in its clone", ErrGone, wt.Path)
	}
	// Made now, or the session could make them: logs/ (git fails a ref
	// update whose reflog it cannot make) is the session's; hooks/ and
	// info/ are the bot's.
	for _, d := range []string{"logs", "hooks", "info"} {
		if err := os.MkdirAll(filepath.Join(r.clone, d), 0o755); err != nil {
			return nil, fmt.Errorf("session directories of %s: %w", wt.Branch, err)
		}
	}
	dirs := []SessionDir{
		{r.clone, Writable},
		{filepath.Join(r.clone, "config"), Readable},
		{filepath.Join(r.clone, lockName), Readable},
		{filepath.Join(r.clone, "HEAD"), Readable},
		{filepath.Join(r.clone, "info"), Readable},
		{filepath.Join(r.clone, "objects", "info"), Readable},
		{filepath.Join(r.clone, "hooks"), Hidden},
		{filepath.Join(r.clone, "worktrees"), Hidden},
		{admin, Writable},
	}
	for _, d := range dirs {
		fi, err := os.Lstat(d.Path)
		if err != nil {
			return nil, fmt.Errorf("session directories of %s: %w", wt.Branch, err)
		}
		if !fi.IsDir() && (d.Access != Readable || !fi.Mode().IsRegular()) {
			return nil, fmt.Errorf("session directories of %s: %s is not a directory", wt.Branch, filepath.Base(d.Path))
		}
	}
	return dirs, nil
}
