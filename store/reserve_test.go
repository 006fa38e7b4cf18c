package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/internal/smallfs"
)

// TestReserve: the reserve holds real blocks of the disk, private to the
// bot; on a full disk, giving it back lets a write the disk refused be
// taken; on a disk without room for it, none is left half made.
func TestReserve(t *testing.T) {
	dir := smallfs.Mount(t, 16<<20)
	db := filepath.Join(dir, "claudeops.db")
	s := openAt(t, db)
	if err := s.KeepReserve(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(ReservePath(db))
	if err != nil || fi.Size() != ReserveSize || fi.Mode().Perm() != privateMode {
		t.Fatalf("reserve: %v, %v", fi, err)
	}
	filler := smallfs.Fill(t, dir, 0)
	id, err := s.StartTurn(t.Context(), Turn{ThreadKey: "t", Prompt: string(make([]byte, 64<<10))})
	if FaultCause(err) != CauseFull {
		t.Fatalf("a write on a full disk: %d, %v; want the disk full", id, err)
	}
	if ok, err := s.FreeReserve(); !ok || err != nil {
		t.Fatalf("FreeReserve: %v, %v", ok, err)
	}
	if free := smallfs.Free(t, dir); free < ReserveSize {
		t.Errorf("%d bytes free once the reserve is given back; want %d", free, ReserveSize)
	}
	if _, err := s.StartTurn(t.Context(), Turn{ThreadKey: "t", Prompt: string(make([]byte, 64<<10))}); err != nil {
		t.Errorf("the write again, in the reserve's space: %v", err)
	}
	if ok, err := s.FreeReserve(); ok || err != nil {
		t.Errorf("FreeReserve again: %v, %v; want none there", ok, err)
	}
	// Full again: no room for a new reserve, and none is left half made.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	smallfs.Fill(t, dir, 0)
	if err := s.KeepReserve(); err == nil {
		t.Error("a reserve was made on a full disk")
	}
	if _, err := os.Stat(ReservePath(db)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after a failed KeepReserve: %v; want no file", err)
	}
}
