package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A SessionDir is a directory of a clone that a session working in one of
// its worktrees must see for its own git to work there (status, diff,
// log, add, commit, checkout -b): the worktree's ".git" file leads to the
// clone.
type SessionDir struct {
	Path   string
	Access DirAccess
}

// DirAccess is how a session sees a SessionDir.
type DirAccess int

const (
	// Readable: its content, unwritable.
	Readable DirAccess = iota
	// Writable: its content, writable.
	Writable
	// Hidden: an empty directory in its place (what lies inside it and
	// is listed too still shows).
	Hidden
)

// SessionDirs is what of wt's clone a runner that shows a session nothing
// else (a sandbox, a container) must show it, nested (a directory inside
// another lies over it):
//
//   - the clone, readable: its config (and config.lock), packed-refs,
//     info/ and HEAD are the bot's and no session writes them, so nothing
//     a session does there can reach what the bot's git reads as
//     configuration;
//   - hooks/ hidden when there is one (a hook planted there, by a session
//     of the local runner say, would run in every other session's git);
//   - objects/ and refs/ and logs/ writable: what a commit or a new branch
//     writes (objects/info/, alternates, readable: no other object store
//     can be grafted onto the clone);
//   - worktrees/ hidden but for wt's own administrative directory,
//     writable (its HEAD, index, reflog): no other thread's index or HEAD
//     is reachable.
//
// What stays shared is data: one session can write objects and move
// another thread's branch in the same clone, as under the local runner.
func (m *Manager) SessionDirs(wt Worktree) ([]SessionDir, error) {
	r, err := m.open(wt)
	if err != nil {
		return nil, err
	}
	admin := adminDir(r, wt)
	if admin == "" {
		return nil, fmt.Errorf("%w: %s has no administrative directory in its clone", ErrGone, wt.Path)
	}
	// A commit's branch reflog goes to logs/: git fails the update when
	// it cannot make it, and a session cannot make it in a readable clone.
	if err := os.MkdirAll(filepath.Join(r.clone, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("session directories of %s: %w", wt.Branch, err)
	}
	dirs := []SessionDir{
		{r.clone, Readable},
		{filepath.Join(r.clone, "objects"), Writable},
		{filepath.Join(r.clone, "objects", "info"), Readable},
		{filepath.Join(r.clone, "refs"), Writable},
		{filepath.Join(r.clone, "logs"), Writable},
		{filepath.Join(r.clone, "worktrees"), Hidden},
		{admin, Writable},
	}
	if fi, err := os.Lstat(filepath.Join(r.clone, "hooks")); err == nil && fi.IsDir() {
		dirs = append(dirs, SessionDir{filepath.Join(r.clone, "hooks"), Hidden})
	} else if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("session directories of %s: hooks is not a directory (%v)", wt.Branch, err)
	}
	for _, d := range dirs {
		if fi, err := os.Lstat(d.Path); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("session directories of %s: %s is not a directory (%v)", wt.Branch, d.Path, err)
		}
	}
	return dirs, nil
}
