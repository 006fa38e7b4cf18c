package store

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestBackupWhileWriting: a backup taken while the store goes on writing
// is a consistent, private, self-contained copy holding at least what was
// written before it began; it never overwrites a file, nor writes through
// a link planted where it works.
func TestBackupWhileWriting(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	for i := range 50 {
		if _, err := s.StartTurn(ctx, Turn{ThreadKey: "console:main", Prompt: "before", StartedAt: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the bot goes on working meanwhile
		defer wg.Done()
		for wctx.Err() == nil {
			_, _ = s.StartTurn(wctx, Turn{ThreadKey: "console:main", Prompt: "during"})
		}
	}()
	dir := t.TempDir()
	dest := filepath.Join(dir, "copy.db")
	err := Backup(ctx, s.Path(), dest)
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}

	st, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != privateMode {
		t.Errorf("backup mode %v, want %v", st.Mode().Perm(), privateMode)
	}
	for _, side := range []string{"-wal", "-shm", ".partial"} {
		if _, err := os.Stat(dest + side); err == nil {
			t.Errorf("%s%s left beside the backup", dest, side)
		}
	}
	// Read as another program would: the copy alone, no WAL beside it.
	db := rawDB(t, dest, "mode=ro")
	var mode, check string
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM turns WHERE prompt = 'before'`).Scan(&n); err != nil || n != 50 {
		t.Errorf("turns from before the backup: %d, %v; want 50", n, err)
	}
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "delete" {
		t.Errorf("journal_mode %q, %v; want delete", mode, err)
	}
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check %q, %v", check, err)
	}

	// Never overwrite; never write through a planted link.
	if err := Backup(ctx, s.Path(), dest); err == nil {
		t.Error("a second backup to the same file overwrote it")
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	if err := os.Symlink(victim, other+".partial"); err != nil {
		t.Fatal(err)
	}
	if err := Backup(ctx, s.Path(), other); err == nil {
		t.Error("a backup wrote through a link at its temporary name")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was changed: %q", b)
	}
	if err := Backup(ctx, filepath.Join(dir, "missing.db"), filepath.Join(dir, "x.db")); err == nil {
		t.Error("a backup of a missing database succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("a backup of a missing database created it")
	}
}
