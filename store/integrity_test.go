package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/dbdamage"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// filled makes a database at db with rows enough that received_messages
// spans pages (its root an interior page), closed cleanly and marked so.
func filled(t *testing.T, db string) {
	t.Helper()
	st, err := Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if _, err := st.RecordMessage(t.Context(), ReceivedMessage{Platform: "console", Key: fmt.Sprint(i),
			ThreadKey: "console:main", Text: strings.Repeat("pineapple ", 20), ReceivedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := MarkOpen(db, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := MarkClosed(db, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestExamine: what is refused before a bot opens its database, and what
// is a first start; the checks are SQLite's own, on a real file.
func TestExamine(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, db string)
		first   bool
		check   string // the check that ran
		found   string // in the *DamagedError; "" for none
	}{
		{name: "nothing at all is a first start", prepare: func(t *testing.T, db string) {}, first: true},
		{name: "a zero-length file never marked is a first start", prepare: func(t *testing.T, db string) {
			os.WriteFile(db, nil, 0o600)
		}, first: true},
		{name: "a sound database closed cleanly: the quick check", prepare: filled, check: "quick_check"},
		{name: "a sound database left open: the full check", prepare: func(t *testing.T, db string) {
			filled(t, db)
			MarkOpen(db, time.Now())
		}, check: "integrity_check"},
		{name: "a sound database with no mark yet (an upgrade): the full check", prepare: func(t *testing.T, db string) {
			filled(t, db)
			os.Remove(MarkPath(db))
		}, check: "integrity_check"},
		{name: "an interior page damaged", prepare: func(t *testing.T, db string) {
			filled(t, db)
			dbdamage.Interior(t, db, "received_messages")
		}, check: "quick_check", found: "quick_check says"},
		{name: "damaged and left open", prepare: func(t *testing.T, db string) {
			filled(t, db)
			dbdamage.Interior(t, db, "received_messages")
			MarkOpen(db, time.Now())
		}, check: "integrity_check", found: "integrity_check says"},
		{name: "zero length where a database was", prepare: func(t *testing.T, db string) {
			filled(t, db)
			os.Truncate(db, 0)
		}, found: "a zero-length file, where the bot had kept its database since"},
		{name: "gone where a database was", prepare: func(t *testing.T, db string) {
			filled(t, db)
			os.Remove(db)
		}, found: "no file, where the bot has kept its database since"},
		{name: "not a database at all", prepare: func(t *testing.T, db string) {
			filled(t, db)
			os.WriteFile(db, bytes.Repeat([]byte("not sqlite "), 500), 0o600)
		}, check: "quick_check", found: "not a database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "claudeops.db")
			tt.prepare(t, db)
			before, _ := os.ReadFile(db)
			ex, err := Examine(t.Context(), db)
			var de *DamagedError
			switch {
			case tt.found == "" && err != nil:
				t.Fatalf("Examine: %v", err)
			case tt.found != "" && (!errors.As(err, &de) || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.found)):
				t.Fatalf("Examine: %v, want a *DamagedError saying %q", err, tt.found)
			case tt.found == "" && (ex.First != tt.first || ex.Check != tt.check):
				t.Errorf("Examine: %+v, want first %v, check %q", ex, tt.first, tt.check)
			}
			if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
				t.Error("Examine changed the file")
			}
		})
	}
}

// TestMarkSaysCleanOrNot: the mark keeps its creation and flips open and
// closed.
func TestMarkSaysCleanOrNot(t *testing.T) {
	db := filepath.Join(t.TempDir(), "claudeops.db")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := MarkOpen(db, t0); err != nil {
		t.Fatal(err)
	}
	if err := MarkClosed(db, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := MarkOpen(db, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	m, ok, err := readMark(db)
	if err != nil || !ok || !m.Created.Equal(t0) || !m.Open || !m.At.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("mark %+v, %v, %v", m, ok, err)
	}
	if fi, err := os.Stat(MarkPath(db)); err != nil || fi.Mode().Perm() != privateMode {
		t.Errorf("mark file: %v, %v", fi, err)
	}
}

// TestFaultsOncePerCause: a storage fault is logged once per cause, not
// once per refusal; other errors not at all; the return after a write,
// once, with how long it was out; a damaged file does not mend.
func TestFaultsOncePerCause(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var asked []string
	f := &Faults{Log: slog.New(slog.NewTextHandler(&buf, nil)), Now: func() time.Time { return now },
		OnFault: func(x Fault) { asked = append(asked, x.Cause) }}
	ro := sqlite3.Error{Code: sqlite3.ErrReadonly}
	full := fmt.Errorf("record message: %w", sqlite3.Error{Code: sqlite3.ErrFull})
	erofs := &os.PathError{Op: "open", Path: "x", Err: syscall.EROFS}
	if _, ok := f.Failed("record", errors.New("UNIQUE constraint failed")); ok {
		t.Error("a record's own error counted as a storage fault")
	}
	f.Worked() // nothing to say
	for range 3 {
		f.Failed("record message", ro)
		f.Failed("record message", erofs) // the same cause
	}
	now = now.Add(90 * time.Second)
	f.Failed("save turn", full)
	now = now.Add(30 * time.Second)
	f.Worked()
	f.Worked()
	f.Failed("read", sqlite3.Error{Code: sqlite3.ErrCorrupt})
	f.Worked()
	if _, out := f.Current(); !out {
		t.Error("a damaged file counted as mended by a write")
	}
	got := buf.String()
	for want, n := range map[string]int{
		"level=WARN msg=\"storage fails: " + CauseReadOnly:              1,
		"level=WARN msg=\"storage fails: " + CauseFull:                  1,
		"level=ERROR msg=\"storage fails: " + CauseDamaged:              1,
		"msg=\"storage works again\" was=\"" + CauseFull + "\" out=30s": 1,
		"storage works again":                                           1,
	} {
		if c := strings.Count(got, want); c != n {
			t.Errorf("%q logged %d times, want %d; log:\n%s", want, c, n, got)
		}
	}
	if strings.Join(asked, ",") != CauseReadOnly+","+CauseFull+","+CauseDamaged {
		t.Errorf("OnFault got %q", asked)
	}
}

// TestCheckIntegrityBesideTheStore: the store's own quick check reads the
// file, not its connections' cache: damage written under an open store
// is found.
func TestCheckIntegrityBesideTheStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "claudeops.db")
	filled(t, db)
	st, err := Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CheckIntegrity(t.Context()); err != nil {
		t.Fatalf("sound: %v", err)
	}
	if _, err := st.UnsettledMessages(context.Background()); err != nil { // pages cached
		t.Fatal(err)
	}
	dbdamage.Interior(t, db, "received_messages")
	if err := st.CheckIntegrity(t.Context()); !errors.Is(err, ErrDamaged) {
		t.Errorf("damaged under the store: %v", err)
	}
}
