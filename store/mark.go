package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// mark is what the bot keeps beside its database (MarkPath): that a
// database is expected there, since when, and whether its owner has it
// open (a mark still open at the next start: the last shutdown was not
// clean).
type mark struct {
	Created time.Time `json:"created"`
	Open    bool      `json:"open"`
	At      time.Time `json:"at"` // when Open last changed
}

// MarkPath is the mark of the database at db: beside it, so that it goes
// wherever the database is configured to live.
func MarkPath(db string) string { return db + ".mark" }

// MarkOpen records that the bot owns the database at db from now: a
// database is expected there from now on (the mark's creation is kept
// when there is one), and until MarkClosed its shutdown counts as
// unclean. Call it after Open, holding the lock.
func MarkOpen(db string, now time.Time) error {
	return writeMark(db, true, now)
}

// MarkClosed records a clean close: call it after Close succeeded.
func MarkClosed(db string, now time.Time) error {
	return writeMark(db, false, now)
}

func writeMark(db string, open bool, now time.Time) error {
	m, ok, err := readMark(db)
	if err != nil {
		return err
	}
	now = now.UTC().Truncate(time.Second)
	if !ok {
		m.Created = now
	}
	m.Open, m.At = open, now
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeFileAtomic(MarkPath(db), append(b, '\n'))
}

// writeFileAtomic writes b to a new private file beside path, syncs it
// and renames it over path: a reader sees the old content or the new.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	os.Remove(tmp) // a leftover of a crash between write and rename
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateMode)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync() //nolint:errcheck // the rename is durable on most file systems without it
		d.Close()
	}
	return nil
}

// readMark reads the mark of db; false when there is none.
func readMark(db string) (mark, bool, error) {
	var m mark
	b, err := os.ReadFile(MarkPath(db))
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read the database's mark: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Created.IsZero() {
		// Unreadable, it still says a database was expected; since when
		// is not known, and the shutdown counts as unclean.
		return mark{Created: time.Unix(0, 0).UTC(), Open: true}, true, nil
	}
	return m, true, nil
}
