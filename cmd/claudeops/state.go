package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/claudeops/claudeops/internal/fspath"
	"github.com/claudeops/claudeops/store"
)

// placeState derives the state directory and the database from the raw
// environment m, and lists what is wrong: a state directory that cannot be
// placed, or any of the bot's state inside the sessions' default working
// directory (where claude, and whatever the model writes, works).
//
// The state directory is CLAUDEOPS_STATE_DIR, else $XDG_STATE_HOME/claudeops,
// else ~/.local/state/claudeops; it is in use when set, or when CLAUDEOPS_DB
// is not set (the database defaults to claudeops.db there). The Matrix
// crypto store and recovery key live beside the database (platformFiles).
func (c *config) placeState(m map[string]string) []string {
	switch {
	case c.StateDir != "":
		c.StateDir = absPath(c.StateDir)
	case c.DB == "":
		dir, ok := xdgDir(m, "XDG_STATE_HOME", ".local/state")
		if !ok {
			return []string{"cannot place the bot's state: set CLAUDEOPS_STATE_DIR (or HOME, or CLAUDEOPS_DB)"}
		}
		c.StateDir = dir
	}
	if c.StateDir == "/" {
		return []string{"CLAUDEOPS_STATE_DIR must be a directory of the bot's own, not /"}
	}
	if c.DB == "" {
		c.DB = filepath.Join(c.StateDir, "claudeops.db")
	}
	return c.stateApart()
}

// xdgDir is claudeops' directory of an XDG base directory: $<xdgVar>
// when it is absolute (the spec says to ignore a relative one), else
// $HOME/<fallback>; ok is false when there is no absolute HOME either.
func xdgDir(m map[string]string, xdgVar, fallback string) (dir string, ok bool) {
	if x := m[xdgVar]; filepath.IsAbs(x) {
		return filepath.Join(x, "claudeops"), true
	}
	home := m["HOME"]
	if home == "" {
		// Tests pass an environment of their own; the process has one HOME.
		home, _ = os.UserHomeDir()
	}
	if !filepath.IsAbs(home) {
		return "", false
	}
	return filepath.Join(home, fallback, "claudeops"), true
}

// statePaths are the bot's state: the state directory when in use, the
// database, the files the platforms keep beside it (the Matrix crypto
// store, the recovery-key file) and the log file.
func statePaths(c config) []string {
	var out []string
	if c.StateDir != "" {
		out = append(out, c.StateDir)
	}
	out = append(out, absPath(c.DB))
	dbs, files := c.platformFiles()
	for _, f := range append(dbs, files...) {
		out = append(out, absPath(f))
	}
	return append(out, logPath(c))
}

// stateApart lists a conflict when the sessions' working directory holds
// any of the bot's state, or lies inside it; paths are compared with their
// symlinks resolved.
func (c *config) stateApart() []string {
	work, err := realPath(c.Bot.Workdir)
	if err != nil {
		return []string{fmt.Sprintf("CLAUDEOPS_WORKDIR %s: %v", c.Bot.Workdir, err)}
	}
	var bad, clash, unresolved []string
	for _, p := range statePaths(*c) {
		rp, err := realPath(p)
		switch {
		case err != nil && !slices.ContainsFunc(unresolved, func(u string) bool {
			return fspath.Within(p, u) || filepath.Dir(p) == filepath.Dir(u) // the same cause, said once
		}):
			unresolved = append(unresolved, p)
			bad = append(bad, fmt.Sprintf("the bot's state %s: %v", p, err))
		case err != nil:
		case fspath.Within(rp, work) || fspath.Within(work, rp):
			clash = append(clash, rp)
		}
	}
	if len(clash) > 0 {
		bad = append(bad, fmt.Sprintf("the sessions' working directory CLAUDEOPS_WORKDIR (%s) and the bot's state (%s) overlap: "+
			"a session could read or change the bot's database and keys; "+
			"set CLAUDEOPS_STATE_DIR (or CLAUDEOPS_DB) outside the working directory, or CLAUDEOPS_WORKDIR elsewhere",
			work, strings.Join(clash, ", ")))
	}
	return bad
}

// realPath is p made absolute with its symlinks resolved as far as it
// exists; the part that does not exist yet is appended as written (Abs has
// cleaned it: no "..", no "."). A part under a file counts as not existing
// (nothing can be there; startChecks says why it cannot be created). A
// part that exists but cannot be resolved (a dangling link, no permission)
// is an error: what it points to is not known.
func realPath(p string) (string, error) {
	dir, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		r, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if _, lerr := os.Lstat(dir); lerr == nil || !(errors.Is(lerr, os.ErrNotExist) || errors.Is(lerr, syscall.ENOTDIR)) {
			return "", fmt.Errorf("resolve %s: %w", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// prepareStateDir creates the state directory and makes it the bot's
// alone (0700, whatever the umask or an earlier mode).
func prepareStateDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the state directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("make the state directory private: %w", err)
	}
	return nil
}

// leftBehind names a database at the old default (./claudeops.db, before the
// state directory) when the bot now uses the state directory's instead, so
// that an upgrade does not silently start afresh.
func leftBehind(cfg config) string {
	if cfg.StateDir == "" || cfg.DB != filepath.Join(cfg.StateDir, "claudeops.db") {
		return ""
	}
	old := absPath("claudeops.db")
	if _, err := os.Stat(old); err != nil || old == absPath(cfg.DB) {
		return ""
	}
	return old
}

// lockProblem says why the database's lock could not be taken: another
// bot holds it (named), or the lock file is not usable.
func lockProblem(cfg config, err error) *configError {
	p := problem{name: "CLAUDEOPS_DB", value: cfg.DB}
	if held := (*store.HeldError)(nil); errors.As(err, &held) {
		p.want = held.Error() + ": one bot per database; stop that bot first, or give this one a CLAUDEOPS_STATE_DIR (or CLAUDEOPS_DB) of its own"
	} else {
		p.want = fmt.Sprintf("cannot lock the database: %v", err)
	}
	return &configError{problems: []problem{p}, raw: cfg.raw}
}

// lockFiles are the places of the database's lock file, as configured and
// with symlinks resolved (where startBot takes it): the bot's own files,
// which no tool call may touch (a session that removed it would let a
// second bot start).
func lockFiles(cfg config) []string {
	out := []string{absPath(store.LockPath(cfg.DB))}
	if db, err := realPath(cfg.DB); err == nil && store.LockPath(db) != out[0] {
		out = append(out, store.LockPath(db))
	}
	return out
}
