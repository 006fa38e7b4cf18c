package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// privateMode is the mode of every file the bot keeps: the database holds
// chat logins, recovery keys, approvals and who said what.
const privateMode = 0o600

// MakePrivate readies the SQLite database at path (its directory must
// exist) so that it and the files SQLite keeps beside it (-wal, -shm,
// -journal) are readable by the bot's user alone, whatever the umask: it
// creates the database empty when missing, and sets 0600 on it and on the
// side files that exist (an older run may have left them wider).
//
// SQLite creates the side files later with the database file's mode, and
// sets that mode on a new one past the umask (unix VFS, robust_open), so
// a private database file is what keeps them private. A process-wide
// umask 077 would do it too, but claude and its tools inherit the umask:
// the files they create in people's repositories would turn 0600.
func MakePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, privateMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	err = chmodPrivate(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("make %s private: %w", path, err)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		f, err := os.Open(path + suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = chmodPrivate(f)
			f.Close()
		}
		if err != nil {
			return fmt.Errorf("make %s private: %w", path+suffix, err)
		}
	}
	return nil
}

// chmodPrivate sets privateMode on f unless it has it already (a file of
// another owner that is private already is fine).
func chmodPrivate(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Mode().Perm() == privateMode {
		return nil
	}
	return f.Chmod(privateMode)
}
