package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/claudeops/claudeops/store"
)

// dbFile is the database's real path: where its lock, its mark and a
// restore act, whichever link the configuration reaches it by.
func dbFile(cfg config) string {
	if db, err := realPath(cfg.DB); err == nil {
		return db
	}
	return absPath(cfg.DB)
}

// examineDB checks the database before the bot opens it (store.Examine,
// under the lock): a damaged one, or one missing or empty where the mark
// says one was, is refused with exit code 78 and what to do, never
// replaced. A first start (nothing there, nothing expected) goes on.
func examineDB(ctx context.Context, db string, log *slog.Logger, stderr io.Writer) int {
	t0 := time.Now()
	ex, err := store.Examine(ctx, db)
	var de *store.DamagedError
	switch {
	case errors.As(err, &de):
		for _, l := range damagedText(de) {
			fmt.Fprintf(stderr, "claudeops: %s\n", oneLine(l))
		}
		return exitConfig
	case err != nil:
		log.Error("check the database", "path", db, "err", err)
		return exitFailure
	case ex.First:
		log.Info("no database yet: a first start, a new one is made", "path", db)
	default:
		log.Info("database checked", "check", ex.Check, "unclean_shutdown", ex.Unclean, "took", time.Since(t0).Round(time.Millisecond).String())
	}
	return exitOK
}

// damagedText is what an operator is told of a database refused at start.
func damagedText(de *store.DamagedError) []string {
	return []string{
		de.Error(),
		"the bot does not start on it, and has changed nothing: the file is where it was, nothing was made in its place",
		"to restore the latest online backup (made by claudeops backup): run `claudeops restore <backup file>` " +
			"with the bot's configuration (it checks the backup, keeps what is at " + de.Path + " aside, renamed, with its -wal and -shm, and puts the copy in place), then start the bot",
		"without a backup, or to start afresh on purpose: move " + de.Path + " and " + store.MarkPath(de.Path) +
			" (with any -wal and -shm) away; docs/OPERATIONS.md, \"The database is damaged, empty or unwritable\"",
	}
}

// markOpen records that the bot owns its database from now (store.MarkOpen):
// a database is expected there, and until closeStore marks it closed, the
// next start takes the shutdown as unclean (a full check).
func markOpen(db string, log *slog.Logger) {
	if err := store.MarkOpen(db, time.Now()); err != nil {
		log.Warn("cannot mark the database as in use: a later start cannot tell that one is expected, nor that this shutdown was clean", "err", err)
	}
}
