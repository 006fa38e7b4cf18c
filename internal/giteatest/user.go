package giteatest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// runUser is the system user Gitea runs as when the tests run as root.
const runUser = "claudeops-test"

// account is who runs Gitea: its name (app.ini's RUN_USER must be it) and,
// when it is not the test's own user, the credential to switch to.
type account struct {
	name string
	cred *syscall.Credential // nil: the test's own user
}

var (
	accountOnce sync.Once
	accountVal  account
	accountErr  error
)

// runAccount finds who runs Gitea: the test's user unless that is root,
// else runUser, created (a system user, no home, no login) when missing.
func runAccount() (account, error) {
	accountOnce.Do(func() { accountVal, accountErr = findAccount() })
	return accountVal, accountErr
}

func findAccount() (account, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return account{}, fmt.Errorf("looking up the current user: %w", err)
		}
		return account{name: u.Username}, nil
	}
	u, err := user.Lookup(runUser)
	if err != nil {
		out, uerr := exec.Command("useradd", "--system", "--no-create-home",
			"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", runUser).CombinedOutput()
		// Another test binary may have made it meanwhile: look again.
		if u, err = user.Lookup(runUser); err != nil {
			return account{}, fmt.Errorf("creating user %s: %v: %s", runUser, uerr, out)
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return account{}, fmt.Errorf("uid of %s: %w", runUser, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return account{}, fmt.Errorf("gid of %s: %w", runUser, err)
	}
	return account{name: runUser, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// chown gives path to the account (a no-op when it is the test's user).
func (a account) chown(path string) error {
	if a.cred == nil {
		return nil
	}
	return os.Chown(path, int(a.cred.Uid), int(a.cred.Gid))
}

// reaches reports whether the account may walk down to path and read it
// (and run it, when it is a program): every directory above it searchable
// and path itself readable, by owner, group or others as the mode says.
func (a account) reaches(path string) bool {
	if a.cred == nil {
		return true
	}
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		need := os.FileMode(1) // search
		if p == path {
			need = 4 | 1 // read and run (a directory: list and enter)
		}
		if !a.may(fi, need) {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// may is the mode check for one file: the owner's bits, the group's or
// the others'.
func (a account) may(fi os.FileInfo, need os.FileMode) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	mode := fi.Mode().Perm()
	switch {
	case st.Uid == a.cred.Uid:
		mode >>= 6
	case st.Gid == a.cred.Gid:
		mode >>= 3
	}
	return mode&need == need
}

var (
	stageOnce             sync.Once
	stagedBin, stagedOpts string
	stageErr              error
)

// reachable gives the binary and options/ as paths the account reaches.
// A cache the account cannot walk to (a clone under /root) is staged once
// per test binary in the temporary directory, named by the binary's size
// and time, so later runs find it there: the binary hard-linked when it
// can be (no copy) and options/ copied.
func (a account) reachable(bin, options string) (string, string, error) {
	if a.reaches(bin) && a.reaches(options) {
		return bin, options, nil
	}
	stageOnce.Do(func() { stagedBin, stagedOpts, stageErr = stage(bin, options) })
	return stagedBin, stagedOpts, stageErr
}

func stage(bin, options string) (string, string, error) {
	fi, err := os.Stat(bin)
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("claudeops-gitea-%s-%d-%d", Version, fi.Size(), fi.ModTime().Unix()))
	if _, err := os.Stat(filepath.Join(dir, "options")); err == nil {
		return filepath.Join(dir, "gitea"), filepath.Join(dir, "options"), nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "claudeops-gitea-stage-")
	if err != nil {
		return "", "", fmt.Errorf("staging gitea: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", "", fmt.Errorf("staging gitea: %w", err)
	}
	if err := os.Link(bin, filepath.Join(tmp, "gitea")); err != nil {
		if err := copyFile(bin, filepath.Join(tmp, "gitea")); err != nil {
			return "", "", fmt.Errorf("staging gitea: %w", err)
		}
	}
	if err := os.CopyFS(filepath.Join(tmp, "options"), os.DirFS(options)); err != nil {
		return "", "", fmt.Errorf("staging gitea's options: %w", err)
	}
	// Another test binary may have staged it meanwhile: theirs serves.
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
		return "", "", fmt.Errorf("staging gitea: %w", err)
	}
	return filepath.Join(dir, "gitea"), filepath.Join(dir, "options"), nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
