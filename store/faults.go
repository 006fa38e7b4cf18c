package store

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"syscall"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// Causes of a storage fault (FaultCause), as the log and the chat name
// them.
const (
	CauseDamaged  = "the database file is damaged"
	CauseReadOnly = "the file system is read-only"
	CauseFull     = "the disk is full"
	CauseIO       = "an I/O error"
)

// FaultCause says whether err is the storage failing (SQLite's corrupt,
// not-a-database, I/O, full, read-only and cannot-open errors, or the
// system's EROFS, ENOSPC, EIO beneath them) rather than a record's own
// error, and which cause; "" when it is not.
func FaultCause(err error) string {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
			return CauseDamaged
		case sqlite3.ErrReadonly:
			return CauseReadOnly
		case sqlite3.ErrFull:
			return CauseFull
		case sqlite3.ErrIoErr, sqlite3.ErrCantOpen:
			return errnoCause(se.SystemErrno)
		}
		return ""
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if c := errnoCause(errno); c != CauseIO || errno == syscall.EIO {
			return c
		}
	}
	return ""
}

// errnoCause names an I/O error by the system's error beneath it.
func errnoCause(e syscall.Errno) string {
	switch e {
	case syscall.EROFS:
		return CauseReadOnly
	case syscall.ENOSPC, syscall.EDQUOT:
		return CauseFull
	}
	return CauseIO
}

// Fault is one storage outage: its cause, when it began, the first error.
type Fault struct {
	Cause string
	Since time.Time
	Err   error
}

// Faults tells the log that storage fails once per cause (not once per
// refused message), and once that it works again, with how long it was
// out. The zero value is not usable: set Log (and Now, or time.Now is
// used). Safe for concurrent use.
type Faults struct {
	Log *slog.Logger
	Now func() time.Time
	// OnFault, when set, is called with each new cause (outside the lock):
	// cmd asks for an integrity check then.
	OnFault func(Fault)

	mu  sync.Mutex
	cur Fault // Cause "": storage works
}

// Failed reports err from doing what: when it is a storage fault
// (FaultCause), the first of its cause is logged (ERROR for a damaged
// file, else WARN) and the outage returned with true; otherwise it returns
// false and logs nothing: the caller's own error handling stands.
func (f *Faults) Failed(what string, err error) (Fault, bool) {
	cause := FaultCause(err)
	if cause == "" {
		return Fault{}, false
	}
	f.mu.Lock()
	if f.cur.Cause == cause {
		cur := f.cur
		f.mu.Unlock()
		return cur, true
	}
	f.cur = Fault{Cause: cause, Since: f.now(), Err: err}
	cur := f.cur
	f.mu.Unlock()
	level := slog.LevelWarn
	if cause == CauseDamaged {
		level = slog.LevelError
	}
	f.Log.Log(context.Background(), level, "storage fails: "+cause+"; what needs it is refused until it works again (said once per cause)",
		"while", what, "err", err)
	if f.OnFault != nil {
		f.OnFault(cur)
	}
	return cur, true
}

// Worked says a write was just taken. After an outage it logs, once,
// that storage works again and how long it was out. A damaged file does
// not mend itself: that outage ends only with a restart (on a restored
// database).
func (f *Faults) Worked() {
	f.mu.Lock()
	cur := f.cur
	if cur.Cause == "" || cur.Cause == CauseDamaged {
		f.mu.Unlock()
		return
	}
	f.cur = Fault{}
	f.mu.Unlock()
	out := f.now().Sub(cur.Since).Round(time.Millisecond)
	f.Log.Info("storage works again", "was", cur.Cause, "out", out.String(), "since", cur.Since.UTC().Format(time.RFC3339))
}

// Current is the outage going on, if any.
func (f *Faults) Current() (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur, f.cur.Cause != ""
}

func (f *Faults) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}
