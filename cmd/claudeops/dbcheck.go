package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
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

// faultCheck checks the database's pages at once after a storage fault
// (store.Faults.OnFault), one check at a time, bounded: the log says
// what it found, whether or not anyone asks /readyz, which checks again
// too.
type faultCheck struct {
	st      *store.Store
	log     *slog.Logger
	recheck func() // /readyz's: Health.RecheckIntegrity
	running sync.Mutex
}

func (c *faultCheck) onFault(f store.Fault) {
	c.recheck()
	if !c.running.TryLock() {
		return // one runs: it reads the file as it is now
	}
	go func() {
		defer c.running.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.st.CheckIntegrity(ctx); err != nil {
			c.log.Error("the database checked after a storage fault: stop the bot and restore it from a backup (claudeops restore) if it is damaged",
				"fault", f.Cause, "err", err)
			return
		}
		c.log.Info("the database checked after a storage fault: its pages are sound", "fault", f.Cause)
	}()
}
