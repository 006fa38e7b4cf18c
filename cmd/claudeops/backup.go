package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/claudeops/claudeops/internal/fspath"
	"github.com/claudeops/claudeops/store"
)

// backupDB is `claudeops backup <file>`: an online copy of the bot's
// database (the one its configuration names) to a new file, taken with
// SQLite's backup API while the bot may be running. It does not take the
// database's lock: the running bot holds that, and a backup only reads.
func backupDB(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintf(stderr, "usage: claudeops backup <file>  (a new file: the database is copied there)\n")
		return exitUsage
	}
	if err := backupPlace(ctx, cfg, args[0]); err != nil {
		fmt.Fprintf(stderr, "claudeops backup: %v\n", err)
		return exitUsage
	}
	if err := store.Backup(ctx, cfg.DB, args[0]); err != nil {
		fmt.Fprintf(stderr, "claudeops backup: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "backed up %s to %s\n", cfg.DB, args[0])
	return exitOK
}

// backupPlace refuses a destination a session could read without anyone
// deciding: inside a session's working directory (CLAUDEOPS_WORKDIR, the
// workspaces, any channel's or thread's stored directory), where Read
// and send_file reach unasked. The copy holds the bot's tokens and keys.
func backupPlace(ctx context.Context, cfg config, dest string) error {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	dir := resolvedPrefix(filepath.Dir(abs))
	sessions := []string{cfg.Bot.Workdir}
	if cfg.Workspaces != "" {
		sessions = append(sessions, cfg.Workspaces)
	}
	stored, err := store.WorkingDirs(ctx, cfg.DB)
	if err != nil {
		return fmt.Errorf("cannot tell where sessions work, so cannot tell the backup is out of their reach: %w", err)
	}
	for _, s := range append(sessions, stored...) {
		if s == "" {
			continue
		}
		for _, w := range []string{absPath(s), resolvedPrefix(absPath(s))} {
			if fspath.Within(dir, w) || fspath.Within(abs, w) {
				return fmt.Errorf("%s is inside %s, where sessions work: a session could read the copy (it holds the bot's tokens and keys); choose a place outside every working directory", abs, s)
			}
		}
	}
	return nil
}

// resolvedPrefix is p with the symlinks of its longest existing prefix
// resolved.
func resolvedPrefix(p string) string {
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		if d == "/" || d == "." {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}
