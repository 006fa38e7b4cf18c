package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/claudeops/claudeops/store"
)

// restoreDB is `claudeops restore <backup>`: the bot's database (the one
// its configuration names) replaced by a copy of a backup, with the bot
// stopped. It takes the database's lock, so that no bot starts meanwhile
// and none runs on it (refused with 78, as a start beside a running bot
// is); the backup is checked as the start checks a database
// (integrity_check) and refused with 2 when unusable, as backup refuses a
// wrong destination; what was at the database's place is kept aside,
// renamed, never removed (store.Restore). 1: the copy failed.
func restoreDB(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintf(stderr, "usage: claudeops restore <backup file>  (made by claudeops backup; the bot must be stopped)\n")
		return exitUsage
	}
	if err := prepareStateDir(cfg.StateDir); err != nil {
		fmt.Fprintf(stderr, "claudeops restore: %v\n", err)
		return exitFailure
	}
	db := dbFile(cfg)
	lock, err := store.TakeLock(db, time.Now())
	if held := (*store.HeldError)(nil); errors.As(err, &held) {
		fmt.Fprintf(stderr, "claudeops restore: %v: stop that bot first; nothing was changed\n", held)
		return exitConfig
	} else if err != nil {
		fmt.Fprintf(stderr, "claudeops restore: cannot lock the database: %v\n", err)
		return exitFailure
	}
	defer lock.Close()
	r, err := store.Restore(ctx, args[0], db, time.Now())
	switch {
	case errors.Is(err, store.ErrBadBackup):
		fmt.Fprintf(stderr, "claudeops restore: %v; nothing was changed: choose another backup\n", err)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "claudeops restore: %v\n", err)
		for _, a := range r.Aside {
			fmt.Fprintf(stderr, "claudeops restore: kept aside: %s\n", a)
		}
		return exitFailure
	}
	fmt.Fprintf(stdout, "restored %s from %s (checked: integrity_check ok)\n", r.DB, r.From)
	for _, a := range r.Aside {
		fmt.Fprintf(stdout, "kept aside, not removed: %s\n", a)
	}
	fmt.Fprintf(stdout, "start the bot: threads resume where the backup left them, if their CLI homes hold their conversations\n")
	return exitOK
}
