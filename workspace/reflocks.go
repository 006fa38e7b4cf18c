package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// git takes a ref's lock by creating <ref>.lock, and a git killed before it
// renamed or removed it leaves it behind: every later git that would update
// the ref then fails ("cannot lock ref … File exists"), a fetch for good.
// Each call of the bot's that reaches the remote from an existing clone
// (fetch, ls-remote, push) holds a shared flock on locks/<clone key> while
// git runs, from whichever bot; so when an exclusive one is to be had no
// such git runs, and a ref lock under refs/remotes/ made before this
// manager started is a dead git's: the plumbing's ref updates last
// milliseconds.

func (m *Manager) locksDir() string { return filepath.Join(m.dir, "locks") }

// holdClone takes the shared flock of r's clone for a git that reaches the
// remote; release lets it go.
func (m *Manager) holdClone(r *repoRef) (release func(), err error) {
	f, err := m.openCloneLock(r)
	if err != nil {
		return nil, err
	}
	if err := flockRetry(f, syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

func (m *Manager) openCloneLock(r *repoRef) (*os.File, error) {
	if err := os.MkdirAll(m.locksDir(), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(m.locksDir(), r.key), os.O_RDONLY|os.O_CREATE, 0o600)
}

// flockRetry takes a blocking flock, again when a signal interrupts it.
func flockRetry(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// dropDeadRefLocks removes the ref locks a dead git left under the clone's
// refs/remotes/ (a fetch, or a push moving its tracking branch, cut off by
// the bot's death), and its packed-refs.lock; nothing while a git of any
// bot reaches the remote from this clone, nothing made since this manager
// started. The caller holds the clone's lock.
func (m *Manager) dropDeadRefLocks(r *repoRef) {
	f, err := m.openCloneLock(r)
	if err != nil {
		m.log.Warn("could not look for ref locks left by a dead git", "clone", r.clone, "err", err)
		return
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return // a git reaches the remote from this clone now
	}
	stale := func(p string, d fs.DirEntry) bool {
		info, err := d.Info()
		return err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".lock") && info.ModTime().Before(m.started)
	}
	var dead []string
	_ = filepath.WalkDir(filepath.Join(r.clone, "refs", "remotes"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && stale(p, d) {
			dead = append(dead, p)
		}
		return nil
	})
	if info, err := os.Lstat(filepath.Join(r.clone, "packed-refs.lock")); err == nil && stale(filepath.Join(r.clone, "packed-refs.lock"), fs.FileInfoToDirEntry(info)) {
		dead = append(dead, filepath.Join(r.clone, "packed-refs.lock"))
	}
	for _, p := range dead {
		if err := os.Remove(p); err != nil {
			m.log.Warn("could not remove a ref lock a dead git left", "path", p, "err", err)
			continue
		}
		m.log.Info("removed a ref lock a dead git left", "path", p)
	}
}
