package workspace

import (
	"fmt"
	"os"
	"path/filepath"
)

// A SessionDir is a part of a clone that a session working in one of its
// worktrees must see for its own git to work there (status, diff, log,
// add, commit, checkout -b, stash): the worktree's ".git" file leads to
// the clone.
type SessionDir struct {
	Path   string // a directory
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
	// Scratch: an empty writable directory in its place, the session's
	// own: what the clone holds there is neither seen nor written.
	Scratch
)

// SessionDirs is what of wt's clone a runner that shows a session nothing
// else (a sandbox, a container) must show it, nested (a part inside
// another lies over it):
//
//   - the clone, readable: its config and config.lock, HEAD, packed-refs,
//     info/ are the bot's, and no session replaces one of them with a
//     link the bot's git would follow (packed-refs linked to a file of
//     the bot's would put its first line in git's error);
//   - objects/ and refs/ writable: what a commit or a new branch writes
//     (objects/info/, alternates, readable: no other object store is
//     grafted onto the clone);
//   - logs/ a scratch directory: the session's reflogs are its own, and
//     no link it leaves there makes the bot's git append a reflog line to
//     a file of the bot's;
//   - hooks/ hidden, made if missing (a hook planted there would run in
//     every other session's git);
//   - worktrees/ hidden but for wt's own administrative directory,
//     writable (its HEAD, index, reflog): no other thread's index or HEAD
//     is reachable.
//
// A link a session leaves in refs/ or objects/ the bot's next git call
// refuses and removes (checkConfig). What stays shared is data: one
// session can write objects and move another thread's branch in the same
// clone, as under the local runner. What needs the clone's own directory
// writable (packed-refs rewritten: a branch deleted, a rebase's end; gc)
// fails.
func (m *Manager) SessionDirs(wt Worktree) ([]SessionDir, error) {
	r, err := m.open(wt)
	if err != nil {
		return nil, err
	}
	admin := adminDir(r, wt)
	if admin == "" {
		return nil, fmt.Errorf("%w: %s has no administrative directory in its clone", ErrGone, wt.Path)
	}
	// Mount points in a clone the session cannot write.
	for _, d := range []string{"logs", "hooks"} {
		if err := os.MkdirAll(filepath.Join(r.clone, d), 0o755); err != nil {
			return nil, fmt.Errorf("session directories of %s: %w", wt.Branch, err)
		}
	}
	dirs := []SessionDir{
		{r.clone, Readable},
		{filepath.Join(r.clone, "objects"), Writable},
		{filepath.Join(r.clone, "objects", "info"), Readable},
		{filepath.Join(r.clone, "refs"), Writable},
		{filepath.Join(r.clone, "logs"), Scratch},
		{filepath.Join(r.clone, "hooks"), Hidden},
		{filepath.Join(r.clone, "worktrees"), Hidden},
		{admin, Writable},
	}
	for _, d := range dirs {
		fi, err := os.Lstat(d.Path)
		if err != nil {
			return nil, fmt.Errorf("session directories of %s: %w", wt.Branch, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("session directories of %s: %s is not a directory", wt.Branch, filepath.Base(d.Path))
		}
	}
	return dirs, nil
}
