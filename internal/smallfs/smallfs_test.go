package smallfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFaults: the kernel, not our code, refuses the writes.
func TestFaults(t *testing.T) {
	dir := Mount(t, 8<<20)
	f, err := os.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	filler := Fill(t, dir, 0)
	_, err = f.Write(make([]byte, 64<<10))
	if err == nil {
		err = f.Sync()
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full file system: %v, want ENOSPC", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatalf("write after freeing: %v", err)
	}
	ReadOnly(t, dir) // with a, open for writing
	if _, err := f.Write([]byte("x")); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("write to an open file on an aborted file system: %v, want EROFS", err)
	}
}
