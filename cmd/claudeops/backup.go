package main

import (
	"context"
	"fmt"
	"io"

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
	if err := store.Backup(ctx, cfg.DB, args[0]); err != nil {
		fmt.Fprintf(stderr, "claudeops backup: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "backed up %s to %s\n", cfg.DB, args[0])
	return exitOK
}
