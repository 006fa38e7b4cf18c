package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// A temporary directory (a clone being made, an index copy) is its maker's
// while the maker lives: the maker holds an exclusive flock on the
// directory itself, which the kernel lets go when the process dies,
// however it dies. So what a dead run left is told from a live one's work
// by the lock alone, whatever its age, and whichever bot (two may share a
// workspaces directory) made it.

// makeTemp makes a directory under tmp/ named prefix… and holds its lock;
// release removes it and lets the lock go.
func (m *Manager) makeTemp(prefix string) (dir string, release func(), err error) {
	for range 3 {
		dir, err := os.MkdirTemp(m.tmpDir(), prefix)
		if err != nil {
			return "", nil, err
		}
		f, err := lockDir(dir)
		if err == nil {
			return dir, func() {
				if err := os.RemoveAll(dir); err != nil {
					m.log.Warn("could not remove a temporary directory", "path", dir, "err", err)
				}
				f.Close()
			}, nil
		}
		// Another start's sweep took it between mkdir and flock.
		m.log.Debug("temporary directory taken by a sweep; another", "path", dir, "err", err)
	}
	return "", nil, fmt.Errorf("make a temporary directory in %s: swept away three times", m.tmpDir())
}

// lockDir takes dir's lock without waiting, and checks that dir is still
// the directory locked (not removed by a sweep meanwhile).
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	held, err1 := f.Stat()
	now, err2 := os.Lstat(dir)
	if err := errors.Join(err1, err2); err != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, fmt.Errorf("%s: removed while it was locked (%v)", dir, err)
	}
	return f, nil
}

// dropDeadTemp removes what a dead run left in the temporary directory: a
// half-made clone (which a killed fetch may have filled with hundreds of
// megabytes), an index copy. What a live maker holds the lock of stays.
func (m *Manager) dropDeadTemp() {
	entries, err := os.ReadDir(m.tmpDir())
	if err != nil {
		m.log.Warn("could not look for temporary directories left by a dead run", "err", err)
		return
	}
	for _, e := range entries {
		p := filepath.Join(m.tmpDir(), e.Name())
		if !e.IsDir() {
			_ = os.Remove(p)
			continue
		}
		f, err := lockDir(p)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			continue // its maker lives
		}
		if err == nil {
			err = removeTree(p) // holding its lock: no maker can take it now
			f.Close()
		}
		if err != nil {
			m.log.Warn("could not remove a leftover of a dead run", "path", p, "err", err)
			continue
		}
		m.log.Info("removed a leftover of a dead run", "path", p)
	}
}
