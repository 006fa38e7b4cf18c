package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// startChecks checks what a run needs of the host, changing nothing: the
// platforms' settings that go together, the working directory, the state
// directory and the database (writable, or creatable), the claude CLI (its
// version too), and what the runner in use needs (the sandbox's program). The lock is not taken here: a
// start that fails its checks leaves the state untouched (startBot takes
// it after). info is the CLI's version check, for the log.
func startChecks(ctx context.Context, c config, consoleOnly bool) (bad []problem, info claudeproc.VersionInfo) {
	if !consoleOnly {
		for _, p := range c.Platforms.list() {
			if p.configured() {
				bad = append(bad, p.startChecks(c)...)
			}
		}
	}
	bad = append(bad, dirCheck("CLAUDEOPS_WORKDIR", c.Bot.Workdir, unix.R_OK|unix.W_OK|unix.X_OK))
	bad = append(bad, stateChecks(c)...)
	bad = append(bad, logFileCheck(c))
	var cli problem
	cli, info = checkCLI(ctx, c)
	bad = append(bad, cli)
	if k := c.Runner.inUse(); k != nil {
		bad = append(bad, fromRunner(k.HostCheck(c.host(nil)))...)
	}
	out := bad[:0]
	for _, p := range bad {
		if p.want != "" {
			out = append(out, p)
		}
	}
	return out, info
}

// dirCheck: dir exists, is a directory, and the bot's user has access
// mode (unix.R_OK, W_OK, X_OK) to it.
func dirCheck(name, dir string, mode uint32) problem {
	p := problem{name: name, value: dir}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.want = "does not exist: want an existing directory"
	case err != nil:
		p.want = fmt.Sprintf("cannot be reached: %v", unwrapPath(err))
	case !st.IsDir():
		p.want = "is not a directory"
	default:
		if err := unix.Access(dir, mode); err != nil {
			p.want = fmt.Sprintf("the bot's user (uid %d) may not %s it: %v", os.Geteuid(), accessVerb(mode), err)
		}
	}
	return p
}

func accessVerb(mode uint32) string {
	if mode&unix.W_OK != 0 {
		return "write in"
	}
	return "read"
}

// placeableDir: dir is a directory the bot can write in, or can be
// created (its nearest existing parent is a directory the bot can write
// in). It creates nothing.
func placeableDir(name, value, dir string) problem {
	p := problem{name: name, value: value}
	st, err := os.Stat(dir)
	if err == nil {
		if !st.IsDir() {
			p.want = fmt.Sprintf("%s is not a directory", dir)
		} else if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
			p.want = fmt.Sprintf("the directory %s is not writable by the bot's user (uid %d): %v", dir, os.Geteuid(), err)
		}
		return p
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		p.want = fmt.Sprintf("the directory %s cannot be reached: %v", dir, unwrapPath(err))
		return p
	}
	parent := dir
	for {
		next := filepath.Dir(parent)
		if next == parent {
			p.want = fmt.Sprintf("the directory %s cannot be created: no parent of it exists", dir)
			return p
		}
		parent = next
		st, err := os.Stat(parent)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			continue
		case err != nil:
			p.want = fmt.Sprintf("the directory %s cannot be created: %v", dir, unwrapPath(err))
		case !st.IsDir():
			p.want = fmt.Sprintf("the directory %s cannot be created: %s is not a directory", dir, parent)
		default:
			if err := unix.Access(parent, unix.W_OK|unix.X_OK); err != nil {
				p.want = fmt.Sprintf("the directory %s cannot be created: %s is not writable by the bot's user (uid %d): %v", dir, parent, os.Geteuid(), err)
			}
		}
		return p
	}
}

// stateChecks: the state directory can be the bot's (writable, or
// creatable, and its own so that it can be made 0700), and the database
// opens for writing, with its side files and lock file: a read-only
// database would let the bot start and then refuse every message.
func stateChecks(c config) []problem {
	if c.DB == "" {
		return nil // not placed: loadConfig said why
	}
	var bad []problem
	db := absPath(c.DB)
	dir := filepath.Dir(db)
	if c.StateDir != "" {
		bad = append(bad, stateDirCheck(c.StateDir))
	}
	if c.StateDir == "" || dir != absPath(c.StateDir) {
		bad = append(bad, placeableDir("CLAUDEOPS_DB", c.DB, dir))
	}
	if slices.ContainsFunc(bad, func(p problem) bool { return p.want != "" }) {
		return bad // the files' own checks would repeat the directory's problem
	}
	for _, f := range []string{db, db + "-wal", db + "-shm", db + "-journal", store.LockPath(db)} {
		bad = append(bad, writableFile(c.DB, f))
	}
	return bad
}

// stateDirCheck: the state directory can be the bot's. One of its user's
// (or any, for root) is, whatever its mode: the bot makes it 0700 at start
// (prepareStateDir), unless its file system is read-only. One of another
// user must be writable, and private already (the bot cannot chmod it).
// One that does not exist must be creatable.
func stateDirCheck(dir string) problem {
	p := problem{name: "CLAUDEOPS_STATE_DIR", value: dir}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return placeableDir(p.name, dir, dir)
	}
	owner := os.Geteuid()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		owner = int(sys.Uid)
	}
	if owner == os.Geteuid() || os.Geteuid() == 0 {
		var fsst unix.Statfs_t
		if unix.Statfs(dir, &fsst) == nil && fsst.Flags&unix.ST_RDONLY != 0 {
			p.want = fmt.Sprintf("the directory %s is on a read-only file system", dir)
		}
		return p
	}
	if p := placeableDir(p.name, dir, dir); p.want != "" {
		return p
	}
	if st.Mode().Perm() != 0o700 {
		p.want = fmt.Sprintf("owned by uid %d, not by the bot's user (uid %d), and not private (mode %o): the bot cannot make it 0700; chown it to the bot's user",
			owner, os.Geteuid(), st.Mode().Perm())
	}
	return p
}

// writableFile: f, one of the database's files, when it exists, is a
// regular file the bot can open for writing (opening changes nothing).
func writableFile(db, f string) problem {
	p := problem{name: "CLAUDEOPS_DB", value: db}
	st, err := os.Stat(f)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p
	case err != nil:
		p.want = fmt.Sprintf("%s cannot be reached: %v", f, unwrapPath(err))
		return p
	case !st.Mode().IsRegular():
		p.want = fmt.Sprintf("%s is not a regular file", f)
		return p
	}
	h, err := os.OpenFile(f, os.O_RDWR, 0)
	if err != nil {
		p.want = fmt.Sprintf("%s cannot be opened for writing by the bot's user (uid %d): %v; the bot needs its database writable",
			f, os.Geteuid(), unwrapPath(err))
		return p
	}
	h.Close()
	return p
}

// checkCLI runs the version check of the CLI sessions will run (not for
// a runner whose CLI is an image's: its Build checks that one). A missing
// CLI calls for exit code 72, as docs/OPERATIONS.md promises.
func checkCLI(ctx context.Context, c config) (problem, claudeproc.VersionInfo) {
	p := problem{name: "CLAUDEOPS_CLAUDE_BIN", value: c.Bot.ClaudeBin}
	if k := c.Runner.inUse(); k != nil && k.ImageCLI() || c.Bot.ClaudeBin == "" {
		return p, claudeproc.VersionInfo{}
	}
	info, err := claudeproc.CheckVersion(ctx, c.Bot.ClaudeBin)
	switch {
	case errors.Is(err, claudeproc.ErrNotFound):
		p.want, p.code = info.Message, exitNotFound
	case err != nil && info.Message != "":
		p.want = info.Message
	case err != nil:
		p.want = fmt.Sprintf("version check failed: %v", err)
	}
	return p, info
}

// modelCredentials are the variables Claude Code authenticates with from
// its environment: a key, a token (`claude setup-token` makes
// CLAUDE_CODE_OAUTH_TOKEN), or a cloud provider's switch.
var modelCredentials = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
}

// credentialSource is a runner that says whether its sessions
// authenticate with the model's credentials from the bot's environment
// (kubernetes.Settings: no, from the operator's Secret). A runner that
// does not say does.
type credentialSource interface {
	EnvCredentials() bool
}

// credentialWarning says, when the sessions' claude will find no
// credentials, which variables give it some; "" when one is set in env,
// or for a runner whose sessions take them elsewhere. Each thread's CLI
// has a home of its own, so a login stored by `claude login` in the bot
// user's ~/.claude is never found.
func credentialWarning(c config, env map[string]string) string {
	if s, ok := c.Runner.inUse().(credentialSource); ok && !s.EnvCredentials() {
		return ""
	}
	for _, name := range modelCredentials {
		if env[name] != "" {
			return ""
		}
	}
	return "no model credentials in the environment: sessions' claude will fail to authenticate. " +
		"Each thread's CLI keeps its state apart, so a login stored by `claude login` is not used: set " +
		strings.Join(modelCredentials[:3], ", ") + " (made by `claude setup-token`), or a cloud provider's variables (" +
		strings.Join(modelCredentials[3:], ", ") + ")"
}

// unwrapPath drops the *PathError's repetition of the operation and path
// when the line names the path already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
