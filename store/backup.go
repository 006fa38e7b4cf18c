package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mattn/go-sqlite3"
)

// Backup copies the database at src to the new file dest with SQLite's
// online backup API, while a bot may be running on src: the copy is one
// consistent snapshot (a single backup step under one read transaction;
// WAL lets the bot go on writing meanwhile), is checked with
// integrity_check, and appears at dest only when complete (written beside
// it, then renamed), made private like the database. dest must not exist:
// a backup never overwrites.
func Backup(ctx context.Context, src, dest string) error {
	srcAbs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	if _, err := os.Stat(srcAbs); err != nil {
		return fmt.Errorf("the database: %w", err)
	}
	destAbs, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(destAbs); err == nil {
		return fmt.Errorf("%s exists: a backup does not overwrite", destAbs)
	}
	tmp := destAbs + ".partial"
	// O_EXCL: a file (or a link planted) at the temporary name is refused,
	// not written through.
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateMode)
	if err != nil {
		return fmt.Errorf("create the backup: %w", err)
	}
	f.Close()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if err := copyDB(ctx, srcAbs, tmp); err != nil {
		return err
	}
	if err := CheckFile(ctx, tmp, true); err != nil {
		return fmt.Errorf("check the backup: %w", err)
	}
	// Link, not rename: it fails, rather than replaces, should dest have
	// appeared meanwhile.
	if err := os.Link(tmp, destAbs); err != nil {
		return fmt.Errorf("put the backup in place: %w", err)
	}
	ok = true
	return os.Remove(tmp)
}

// copyDB runs the backup from src's main database into dest's.
func copyDB(ctx context.Context, src, dest string) error {
	from, err := sql.Open("sqlite3", uri(src, fmt.Sprintf("mode=ro&_busy_timeout=%d", busyTimeout.Milliseconds())))
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := sql.Open("sqlite3", uri(dest, ""))
	if err != nil {
		return err
	}
	defer to.Close()
	fc, err := from.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open the database: %w", err)
	}
	defer fc.Close()
	tc, err := to.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open the backup: %w", err)
	}
	defer tc.Close()
	if err := tc.Raw(func(td any) error {
		return fc.Raw(func(fd any) error {
			b, err := td.(*sqlite3.SQLiteConn).Backup("main", fd.(*sqlite3.SQLiteConn), "main")
			if err != nil {
				return fmt.Errorf("start the backup: %w", err)
			}
			done, stepErr := b.Step(-1) // all pages at once: one snapshot
			finErr := b.Finish()
			switch {
			case stepErr != nil:
				return fmt.Errorf("copy the database: %w", stepErr)
			case !done:
				return errors.New("copy the database: the backup did not complete")
			case finErr != nil:
				return fmt.Errorf("finish the backup: %w", finErr)
			}
			return nil
		})
	}); err != nil {
		return err
	}
	// The copy carries the database's WAL mode; as a file on its own it
	// needs none (and a read-only open of it would want a -shm file).
	if _, err := tc.ExecContext(ctx, "PRAGMA journal_mode = DELETE"); err != nil {
		return fmt.Errorf("finish the backup: %w", err)
	}
	return nil
}

// WorkingDirs lists the directories sessions of the database at db work
// in, as stored: channels' working directories and threads' (their
// worktrees too). It opens the database read-only, beside a running bot.
func WorkingDirs(ctx context.Context, db string) ([]string, error) {
	conn, err := sql.Open("sqlite3", uri(db, fmt.Sprintf("mode=ro&_busy_timeout=%d", busyTimeout.Milliseconds())))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `
SELECT cwd FROM channels WHERE cwd != ''
UNION SELECT cwd FROM threads WHERE cwd != ''
UNION SELECT worktree FROM threads WHERE worktree != ''`)
	if err != nil {
		return nil, fmt.Errorf("read the working directories: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
