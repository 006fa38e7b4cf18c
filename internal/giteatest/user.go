package giteatest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
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
