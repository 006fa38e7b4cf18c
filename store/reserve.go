package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// The reserve is disk space the bot keeps beside its database, in a file
// of its own, for a full disk: given back (FreeReserve), it lets the
// records of what threads were already shown be written, as a ballast
// file does for other databases. KeepReserve makes it again at the next
// start, when the disk has room.

// ReserveSize is the space kept: some hundreds of SQLite pages, many
// turns' ends and settlements.
const ReserveSize = 2 << 20

// ReservePath is the reserve of the database at db: beside it, on its
// file system.
func ReservePath(db string) string { return db + ".reserve" }

// KeepReserve makes sure the reserve holds ReserveSize bytes of the disk:
// written (not sparse) and synced. It fails, leaving none, when the disk
// has no room for it.
func (s *Store) KeepReserve() error {
	path := ReservePath(s.path)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() >= ReserveSize {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, privateMode)
	if err != nil {
		return fmt.Errorf("keep a reserve of disk space beside the database: %w", err)
	}
	_, err = f.Write(make([]byte, ReserveSize))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("keep a reserve of disk space beside the database: %w", err)
	}
	return nil
}

// FreeReserve gives the reserve's space back to the disk, for the
// database's writes; it reports whether there was a reserve.
func (s *Store) FreeReserve() (bool, error) {
	err := os.Remove(ReservePath(s.path))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("give back the reserve beside the database: %w", err)
	}
	return true, nil
}
