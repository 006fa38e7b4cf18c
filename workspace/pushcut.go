package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A push the bot cannot prove did not happen. Push writes what it is about
// to send (PushCut's fields) to pushes/ before git starts, holds that
// file's flock while git runs, and removes it when git has returned, its
// outcome known to the caller. So a file whose lock is free is a push cut
// off by the death of the bot that made it: git may have sent it or not
// (git is killed with the bot, but the remote may have taken the pack and
// the ref before). Only the remote can say; CheckCut asks it.

// PushCut is a push cut off by the death of the bot that ran it.
type PushCut struct {
	Worktree Worktree
	// Commit is what the branch was at when git started: what was being
	// pushed.
	Commit string
	// Owner is the Push caller's name for who is to be told (a thread's key).
	Owner   string
	Started time.Time
	file    string
}

// CutState is what the remote says of a cut push.
type CutState int

const (
	// CutUnknown: the remote did not answer.
	CutUnknown CutState = iota
	// CutPushed: the remote's branch is at the commit being pushed.
	CutPushed
	// CutNotPushed: the remote's branch is elsewhere, or missing.
	CutNotPushed
)

// CutCheck is CheckCut's answer: the state, and what was checked.
type CutCheck struct {
	State CutState
	// Remote is the remote branch's commit; "" when it has no such branch
	// or did not answer.
	Remote string
	// Err is why the remote did not answer (CutUnknown).
	Err error
}

func (m *Manager) pushesDir() string { return filepath.Join(m.dir, "pushes") }

// pushFile is where a push of repo's branch is recorded while it runs.
func (m *Manager) pushFile(r *repoRef, branch string) string {
	sum := sha256.Sum256([]byte(r.key + "\x00" + branch))
	return filepath.Join(m.pushesDir(), hex.EncodeToString(sum[:12])+".json")
}

// beginPush records the push about to start and holds its lock; done
// removes the record once git has returned.
func (m *Manager) beginPush(r *repoRef, wt Worktree, commit, owner string) (done func(), err error) {
	b, err := json.Marshal(PushCut{Worktree: wt, Commit: commit, Owner: owner, Started: time.Now().UTC()})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(m.pushesDir(), 0o700); err != nil {
		return nil, err
	}
	p := m.pushFile(r, wt.Branch)
	// The record is whole or absent: written aside, synced, renamed.
	tmp := p + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another push of %s runs: %w", wt.Branch, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		f.Close()
		_ = os.Remove(tmp)
		return nil, err
	}
	return func() {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.log.Warn("could not remove the record of a finished push", "path", p, "err", err)
		}
		f.Close()
	}, nil
}

// CutPushes lists the pushes that a dead run of the bot left cut off, and
// holds none of them: a push whose maker lives is not listed. Call it at
// start; each is told (CheckCut) and then forgotten (ForgetCut).
func (m *Manager) CutPushes() ([]PushCut, error) {
	entries, err := os.ReadDir(m.pushesDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for cut pushes: %w", err)
	}
	var cuts []PushCut
	for _, e := range entries {
		p := filepath.Join(m.pushesDir(), e.Name())
		if !strings.HasSuffix(e.Name(), ".json") {
			continue // a record half made (.new): nothing was pushed yet
		}
		c, err := m.readCut(p)
		if err != nil {
			m.log.Warn("unreadable record of a cut push; removed", "path", p, "err", err)
			_ = os.Remove(p)
			continue
		}
		if c.file != "" {
			cuts = append(cuts, c)
		}
	}
	return cuts, nil
}

// readCut reads a push record whose lock is free; c.file is "" when its
// maker still holds it.
func (m *Manager) readCut(p string) (PushCut, error) {
	f, err := os.Open(p)
	if err != nil {
		return PushCut{}, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		return PushCut{}, nil
	} else if err != nil {
		return PushCut{}, err
	}
	var c PushCut
	dec := json.NewDecoder(f)
	if err := dec.Decode(&c); err != nil {
		return PushCut{}, err
	}
	if _, err := m.open(c.Worktree); err != nil {
		return PushCut{}, err
	}
	if !isObjectID(c.Commit) {
		return PushCut{}, fmt.Errorf("commit %q", c.Commit)
	}
	c.file = p
	return c, nil
}

// CheckCut asks the remote where the cut push's branch is (git ls-remote)
// and compares it with the commit that was being pushed. When the remote
// has it, the clone's remote-tracking branch is moved there, as the push
// would have done. The ref locks the killed git may have left in the
// bot's own clone are removed first (dropDeadRefLocks), so that a retried
// push does not fail on them.
func (m *Manager) CheckCut(ctx context.Context, c PushCut) CutCheck {
	r, err := m.open(c.Worktree)
	if err != nil {
		return CutCheck{Err: err}
	}
	unlock, err := m.lock(ctx, r.key)
	if err != nil {
		return CutCheck{Err: err}
	}
	defer unlock()
	m.dropDeadRefLocks(r)
	ref := "refs/heads/" + c.Worktree.Branch
	out, err := m.run(ctx, gitCall{repo: r, slow: true, env: r.auth, args: []string{"ls-remote", "origin", ref}})
	if err != nil {
		return CutCheck{Err: err}
	}
	remote := ""
	for line := range strings.Lines(string(out)) {
		if id, name, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok && name == ref && isObjectID(id) {
			remote = id
		}
	}
	if remote != c.Commit {
		return CutCheck{State: CutNotPushed, Remote: remote}
	}
	if _, err := m.run(ctx, gitCall{repo: r, args: []string{"update-ref", "-m", "claudeops: a cut push found pushed",
		"refs/remotes/origin/" + c.Worktree.Branch, c.Commit}}); err != nil {
		m.log.Warn("could not record a cut push found pushed", "branch", c.Worktree.Branch, "err", err)
	}
	return CutCheck{State: CutPushed, Remote: remote}
}

// ForgetCut removes the record of a cut push once it has been told.
func (m *Manager) ForgetCut(c PushCut) error {
	if c.file == "" {
		return nil
	}
	if err := os.Remove(c.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forget the cut push of %s: %w", c.Worktree.Branch, err)
	}
	return nil
}
