package store

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFilesArePrivate: under the loosest umask, the database and the WAL
// and shared-memory files SQLite creates after a write are 0600, its
// directory (created by Open) 0700; files an older run left wider are made
// 0600 too. The oracle is stat.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0) // what SQLite's 0644 default and MkdirAll's mode would keep
	defer syscall.Umask(old)
	tests := []struct {
		name  string
		setup func(db string)
	}{
		{"new", func(string) {}},
		{"left wide by an older run", func(db string) {
			if err := os.Mkdir(filepath.Dir(db), 0o700); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{db, db + "-wal", db + "-shm"} {
				if err := os.WriteFile(f, nil, 0o666); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(f, 0o666); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "sub", "bot.db") // Open creates sub
			tt.setup(db)
			ctx := context.Background()
			s, err := Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.SaveChannel(ctx, Channel{Key: "c", Cwd: "/x", UpdatedBy: "u", UpdatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.GetChannel(ctx, "c"); err != nil { // the read pool maps the -shm too
				t.Fatal(err)
			}
			for _, f := range []string{db, db + "-wal", db + "-shm"} {
				st, err := os.Stat(f)
				if err != nil {
					t.Fatalf("%s after a write: %v", f, err)
				}
				if m := st.Mode().Perm(); m != 0o600 {
					t.Errorf("%s: mode %o, want 600", filepath.Base(f), m)
				}
			}
			if st, err := os.Stat(filepath.Dir(db)); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("directory: %v %v, want 0700", st.Mode(), err)
			}
		})
	}
}
