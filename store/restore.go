package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ErrBadBackup is wrapped by Restore's error when the file to restore
// from cannot be used (missing, damaged, not a claudeops database, or
// newer than this binary): another backup is needed, nothing was changed.
var ErrBadBackup = errors.New("not a usable backup")

// Restored is what Restore did.
type Restored struct {
	From, DB string
	// Aside are the files that were at the database's place (the
	// database, its -wal, -shm, -journal), each kept under a new name.
	Aside []string
}

// Restore puts a copy of the backup at from in place of the database at
// db. The caller holds db's lock (TakeLock): no bot has it open. The
// backup is checked first (integrity_check, and a schema this binary
// knows); then copied beside db with SQLite's backup API (a consistent
// copy even if from has a -wal of its own) and checked again; then what
// was at db (and its -wal, -shm, -journal, which SQLite would otherwise
// apply to the copy) is renamed aside, never removed; then the copy
// takes db's name and the mark says the database is there, closed
// cleanly. A failure before the renames changes nothing at db.
func Restore(ctx context.Context, from, db string, now time.Time) (Restored, error) {
	fromAbs, err := filepath.Abs(from)
	if err != nil {
		return Restored{}, err
	}
	if err := checkBackup(ctx, fromAbs, db); err != nil {
		return Restored{}, fmt.Errorf("%s: %w: %w", fromAbs, ErrBadBackup, err)
	}
	tmp := db + ".restoring"
	os.Remove(tmp) // a leftover of a restore that was cut off
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateMode)
	if err != nil {
		return Restored{}, fmt.Errorf("create the copy: %w", err)
	}
	f.Close()
	defer os.Remove(tmp) // a no-op once linked and removed
	if err := copyDB(ctx, fromAbs, tmp); err != nil {
		return Restored{}, err
	}
	if err := CheckFile(ctx, tmp, true); err != nil {
		return Restored{}, fmt.Errorf("check the copy: %w", err)
	}
	r := Restored{From: fromAbs, DB: db}
	stamp := now.UTC().Format("20060102T150405Z")
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if _, err := os.Lstat(db + suffix); err != nil {
			continue
		}
		aside := db + ".before-restore-" + stamp + suffix
		if err := os.Rename(db+suffix, aside); err != nil {
			return r, fmt.Errorf("keep %s aside: %w", db+suffix, err)
		}
		r.Aside = append(r.Aside, aside)
	}
	if err := os.Link(tmp, db); err != nil {
		return r, fmt.Errorf("put the copy in place: %w", err)
	}
	if d, err := os.Open(filepath.Dir(db)); err == nil {
		d.Sync() //nolint:errcheck // best effort: the renames' durability
		d.Close()
	}
	if err := MarkClosed(db, now); err != nil {
		return r, err
	}
	return r, nil
}

// checkBackup: from is a regular file other than db, sound
// (integrity_check), and a claudeops database this binary can open.
func checkBackup(ctx context.Context, from, db string) error {
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return errors.New("not a database file")
	}
	if dfi, err := os.Stat(db); err == nil && os.SameFile(fi, dfi) {
		return errors.New("it is the database itself")
	}
	if err := CheckFile(ctx, from, true); err != nil {
		return err
	}
	conn, err := sql.Open("sqlite3", uri(from, "mode=ro"))
	if err != nil {
		return err
	}
	defer conn.Close()
	var v int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	switch {
	case v == 0:
		return errors.New("not a claudeops database (no schema version)")
	case v > len(migrations):
		return fmt.Errorf("%w: schema version %d, this binary knows up to %d", ErrNewerSchema, v, len(migrations))
	}
	return nil
}
