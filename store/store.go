package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3" // also registers the "sqlite3" driver
)

// busyTimeout is how long a connection waits for another connection's lock
// before a statement fails with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// connParams are applied by the driver to every new connection of both pools.
// The driver turns them into PRAGMAs when it opens the connection, so a
// connection the pool replaces gets them too. _synchronous must be explicit:
// the driver lowers it to NORMAL when it sees _journal_mode=WAL.
var connParams = fmt.Sprintf("_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_synchronous=FULL",
	busyTimeout.Milliseconds())

// ErrNotFound is wrapped by methods that update a record by key when the
// record does not exist.
var ErrNotFound = errors.New("not found")

// Store is claudeops' SQLite database. It is safe for concurrent use; Close it
// once, after everything that uses it has stopped.
type Store struct {
	path  string
	write *sql.DB // one connection, BEGIN IMMEDIATE
	read  *sql.DB // mode=ro, several connections
}

// Open opens (creating it and its parent directory if missing) the database
// at path, and migrates it to the newest schema this binary knows. It refuses
// a database whose schema is newer, with an error wrapping ErrNewerSchema.
// Opening an up-to-date database changes nothing, and several processes may
// open the same file at once: migrations serialize on the write lock.
func Open(ctx context.Context, path string) (*Store, error) {
	s, err := open(ctx, path, migrations)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

func open(ctx context.Context, path string, ms []migration) (*Store, error) {
	if path == "" {
		return nil, errors.New("empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, err
	}
	if err := MakePrivate(abs); err != nil {
		return nil, err
	}

	if err := ensureWAL(ctx, abs); err != nil {
		return nil, err
	}

	write, err := sql.Open("sqlite3", uri(abs, connParams+"&_txlock=immediate"))
	if err != nil {
		return nil, err
	}
	// One writer: SQLite has a single write lock anyway, and queuing in
	// database/sql (which honours ctx) is kinder than spinning in busy_timeout.
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	if err := migrate(ctx, write, ms); err != nil {
		write.Close()
		return nil, err
	}

	// The read pool opens last: a read-only connection could not have
	// switched the file to WAL, nor created it.
	read, err := sql.Open("sqlite3", uri(abs, connParams+"&mode=ro"))
	if err != nil {
		write.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxIdleTime(5 * time.Minute)
	if err := read.PingContext(ctx); err != nil {
		read.Close()
		write.Close()
		return nil, fmt.Errorf("read pool: %w", err)
	}
	return &Store{path: abs, write: write, read: read}, nil
}

// ensureWAL switches the database file to WAL mode, once and for all, before
// the pools open. Every pool connection also asks for WAL, which on a file
// already in WAL mode is a no-op; but on a new file, connections that ask at
// the same moment (two processes opening it together) can deadlock on the
// lock upgrade, and SQLite then fails one at once with SQLITE_BUSY instead of
// calling the busy handler. Here that case is retried.
func ensureWAL(ctx context.Context, abs string) error {
	db, err := sql.Open("sqlite3", uri(abs, fmt.Sprintf("_busy_timeout=%d", busyTimeout.Milliseconds())))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(ctx, busyTimeout)
	defer cancel()
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		if err == nil && mode != "wal" {
			return fmt.Errorf("set WAL mode: journal_mode is %q", mode)
		}
		if err == nil {
			return nil
		}
		var se sqlite3.Error
		if !errors.As(err, &se) || se.Code != sqlite3.ErrBusy {
			return fmt.Errorf("set WAL mode: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("set WAL mode: %w", err)
		case <-time.After(delay):
		}
	}
}

// uri builds a file: URI with the given query, so that SQLite itself reads
// options such as mode=ro, with the path's URI metacharacters escaped.
func uri(abs, query string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(abs)
	return "file:" + esc + "?" + query
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes both pools. Statements still running finish first.
func (s *Store) Close() error {
	// Readers first: the writer's close, as the last connection, checkpoints
	// the WAL into the main file.
	return errors.Join(s.read.Close(), s.write.Close())
}

// nullTime is a time column: UTC Unix milliseconds, NULL for the zero time.
func nullTime(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// timeOf reverses nullTime.
func timeOf(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMilli(n.Int64).UTC()
}

// scanner is the part of *sql.Row and *sql.Rows the record scanners use.
type scanner interface {
	Scan(dest ...any) error
}

// queryAll runs a read query and scans every row with scan.
func queryAll[T any](ctx context.Context, db *sql.DB, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// queryOne runs a read query expected to return at most one row.
func queryOne[T any](ctx context.Context, db *sql.DB, scan func(scanner) (T, error), query string, args ...any) (T, bool, error) {
	v, err := scan(db.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		var zero T
		return zero, false, nil
	}
	if err != nil {
		var zero T
		return zero, false, err
	}
	return v, true, nil
}
