package store

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/dbdamage"
)

// TestRestoreRefusesWhatCannotServe: a backup that is missing, empty,
// damaged, not a claudeops database, newer than this binary or the
// database itself is refused with ErrBadBackup, and nothing at the
// database's place changes.
func TestRestoreRefusesWhatCannotServe(t *testing.T) {
	tests := []struct {
		name string
		from func(t *testing.T, db string) string
		want string
	}{
		{"missing", func(t *testing.T, db string) string { return filepath.Join(t.TempDir(), "none.db") }, "no such file"},
		{"zero length", func(t *testing.T, db string) string {
			p := filepath.Join(t.TempDir(), "empty.db")
			os.WriteFile(p, nil, 0o600)
			return p
		}, "not a database file"},
		{"damaged", func(t *testing.T, db string) string {
			p := filepath.Join(t.TempDir(), "bad.db")
			filled(t, p)
			dbdamage.Interior(t, p, "received_messages")
			return p
		}, "integrity_check says"},
		{"another program's database", func(t *testing.T, db string) string {
			p := filepath.Join(t.TempDir(), "other.db")
			dbdamage.Filled(t, p)
			return p
		}, "not a claudeops database"},
		{"newer than this binary", func(t *testing.T, db string) string {
			p := filepath.Join(t.TempDir(), "newer.db")
			filled(t, p)
			conn, _ := sql.Open("sqlite3", "file:"+p)
			defer conn.Close()
			if _, err := conn.Exec("PRAGMA user_version = 9999"); err != nil {
				t.Fatal(err)
			}
			return p
		}, "newer"},
		{"the database itself", func(t *testing.T, db string) string { return db }, "the database itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "claudeops.db")
			filled(t, db)
			before, _ := os.ReadFile(db)
			_, err := Restore(t.Context(), tt.from(t, db), db, time.Now())
			if !errors.Is(err, ErrBadBackup) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Restore: %v, want ErrBadBackup saying %q", err, tt.want)
			}
			after, _ := os.ReadFile(db)
			aside, _ := filepath.Glob(db + ".before-restore-*")
			if !bytes.Equal(before, after) || len(aside) > 0 {
				t.Errorf("a refused restore changed the database (kept aside: %v)", aside)
			}
		})
	}
}

// TestRestoreKeepsWhatWasThereAside: the database and the -wal and -shm
// beside it are renamed aside, never removed (SQLite would apply an old
// -wal to the copy); the copy opens with the backup's records, and the
// next Examine finds it sound and closed cleanly.
func TestRestoreKeepsWhatWasThereAside(t *testing.T) {
	dir := t.TempDir()
	backup, db := filepath.Join(dir, "backup.db"), filepath.Join(dir, "claudeops.db")
	filled(t, backup)
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.WriteFile(f, []byte("old "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	r, err := Restore(t.Context(), backup, db, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Aside) != 3 {
		t.Fatalf("kept aside %v, want the database, -wal and -shm", r.Aside)
	}
	for _, s := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(db + ".before-restore-20260304T050607Z" + s)
		if err != nil || string(b) != "old "+db+s {
			t.Errorf("%s kept aside: %q, %v", db+s, b, err)
		}
		if s != "" {
			if _, err := os.Stat(db + s); err == nil {
				t.Errorf("%s left beside the copy", db+s)
			}
		}
	}
	if ex, err := Examine(t.Context(), db); err != nil || ex.Unclean {
		t.Errorf("Examine after the restore: %+v, %v", ex, err)
	}
	st, err := Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ms, err := st.UnsettledMessages(t.Context()); err != nil || len(ms) != 300 {
		t.Errorf("the copy holds %d messages (%v), want the backup's 300", len(ms), err)
	}
}
