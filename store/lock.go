package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrInUse is wrapped by the error TakeLock returns when another process
// holds the database's lock; errors.As finds a *HeldError for who.
var ErrInUse = errors.New("database in use")

// Holder is who holds a database's lock, as the holder wrote it into the
// lock file.
type Holder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

// HeldError says that another process holds the lock of the database at
// Path. Known is false when the lock file did not (yet) name its holder.
type HeldError struct {
	Path   string
	Holder Holder
	Known  bool
}

func (e *HeldError) Error() string {
	if !e.Known {
		return fmt.Sprintf("database %s is in use by another process (its lock file %s names no holder yet)", e.Path, LockPath(e.Path))
	}
	return fmt.Sprintf("database %s is in use by pid %d on host %s since %s",
		e.Path, e.Holder.PID, e.Holder.Host, e.Holder.Since.Format(time.RFC3339))
}

func (e *HeldError) Unwrap() error { return ErrInUse }

// Lock is a process's exclusive hold on a database: while one is held, no
// other TakeLock of the same database succeeds, in this process or another
// (on this host; a network file system that does not pass flock on gives
// no such promise). Open does not take it: several processes may open a
// database (a test or an operator reading it); the lock is for whoever
// acts on the database's contents as the one owner, the bot.
type Lock struct {
	f *os.File
}

// LockPath is the lock file of the database at db: beside it, so that it
// follows the database wherever it is configured to live, and is among the
// files that go with it (like -wal and -shm).
func LockPath(db string) string { return db + ".lock" }

// TakeLock takes the database's lock for the life of the process, or until
// Close: an exclusive flock on LockPath(db), created 0600 when missing, into
// which it writes its holder (this process's pid, the host name and now).
// It does not wait: when another process holds the lock, the error is a
// *HeldError naming that holder.
//
// Why flock on a file of its own: the kernel releases it when the holding
// process ends, however it ends (kill -9 included), so a lock file left
// behind never blocks a start; and SQLite's own locks (fcntl, on the
// database file) are not disturbed. The file is never removed: removing it
// while another process waits would let a third lock a new file of the
// same name.
func TakeLock(db string, now time.Time) (*Lock, error) {
	p := LockPath(db)
	// O_NOFOLLOW: the lock file is written; a link planted in its place
	// would redirect the write. Go opens with O_CLOEXEC: processes the bot
	// starts (claude) do not inherit the lock and cannot keep it after the
	// bot is gone.
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, privateMode)
	if err != nil {
		return nil, fmt.Errorf("open the lock file: %w", err)
	}
	if err := chmodPrivate(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("make the lock file %s private: %w", p, err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			h, known := readHolder(f)
			return nil, &HeldError{Path: db, Holder: h, Known: known}
		}
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	if err := writeHolder(f, Holder{PID: os.Getpid(), Host: host, Since: now.UTC().Truncate(time.Second)}); err != nil {
		f.Close() // releases the flock
		return nil, fmt.Errorf("write the holder into %s: %w", p, err)
	}
	return &Lock{f: f}, nil
}

// Close releases the lock (the file stays, naming its last holder). Call it
// after the store is closed. Safe on a nil *Lock.
func (l *Lock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// flock retries what a signal interrupted.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// writeHolder replaces the file's content with h as one JSON line. It
// writes first and truncates after, so a reader sees the old line or the
// new one, each whole on the first line.
func writeHolder(f *os.File, h Holder) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		return err
	}
	return f.Sync()
}

// readHolder reads the holder from the file's first line; false when it
// names none (a holder between taking the lock and writing its line).
func readHolder(f *os.File) (Holder, bool) {
	var h Holder
	line, err := bufio.NewReader(io.NewSectionReader(f, 0, 4096)).ReadString('\n')
	if err != nil && line == "" {
		return h, false
	}
	if json.Unmarshal([]byte(strings.TrimSpace(line)), &h) != nil || h.PID == 0 {
		return Holder{}, false
	}
	return h, true
}
