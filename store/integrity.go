package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrDamaged is wrapped by the error of a database that must not be used
// as it is: damaged, or missing or empty where one is expected; errors.As
// finds a *DamagedError for what was found.
var ErrDamaged = errors.New("database damaged or missing")

// DamagedError says what was found at Path instead of a sound database.
type DamagedError struct {
	Path  string
	Found string // what was found: the check's findings, or what the file is
	Check string // the check that found it ("quick_check", "integrity_check"), "" for none
}

func (e *DamagedError) Error() string {
	if e.Check == "" {
		return fmt.Sprintf("database %s: %s", e.Path, e.Found)
	}
	return fmt.Sprintf("database %s is damaged: %s says %s", e.Path, e.Check, e.Found)
}

func (e *DamagedError) Unwrap() error { return ErrDamaged }

// maxFindings is how many of a check's lines an error carries.
const maxFindings = 5

// CheckFile checks the database file at path as SQLite can: PRAGMA
// quick_check (every page readable and well formed, O(N)), or with full
// PRAGMA integrity_check (also that every index matches its table). A
// damaged file gives a *DamagedError; a file that cannot be read at all
// (permissions, a lock held past the busy timeout) gives a plain error.
// It uses a connection of its own, opened for this check alone, so that
// no page cached by the store's connections hides what the file holds;
// it reads only, and may run beside a bot writing the database.
func CheckFile(ctx context.Context, path string, full bool) error {
	check := "quick_check"
	if full {
		check = "integrity_check"
	}
	db, err := sql.Open("sqlite3", uri(path, fmt.Sprintf("mode=ro&_busy_timeout=%d", busyTimeout.Milliseconds())))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA %s(%d)", check, maxFindings))
	if err != nil {
		return checkErr(path, check, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return checkErr(path, check, err)
		}
		found = append(found, line)
	}
	if err := rows.Err(); err != nil {
		return checkErr(path, check, err)
	}
	if len(found) == 1 && found[0] == "ok" {
		return nil
	}
	return &DamagedError{Path: path, Check: check, Found: fmt.Sprintf("%q", strings.Join(found, "; "))}
}

// checkErr is a check that could not run: damage when SQLite says so.
func checkErr(path, check string, err error) error {
	if FaultCause(err) == CauseDamaged {
		return &DamagedError{Path: path, Check: check, Found: err.Error()}
	}
	return fmt.Errorf("%s of %s: %w", check, path, err)
}

// CheckIntegrity runs CheckFile's quick check on the store's file.
func (s *Store) CheckIntegrity(ctx context.Context) error {
	return CheckFile(ctx, s.path, false)
}

// Exam is what Examine found of a database before it is opened.
type Exam struct {
	First bool   // nothing was there, and nothing was expected: a first start
	Check string // the check that ran ("quick_check", "integrity_check"); "" on a first start
	// Unclean: the mark says the last owner did not close it (or there is
	// no mark yet): the full check ran.
	Unclean bool
}

// Examine looks at the database at db before a bot opens it, with the
// mark beside it (MarkPath): a missing or zero-length file where the mark
// says a database was is refused, as is a damaged one (a full
// integrity_check when the last owner did not close it cleanly, or when
// there is no mark yet; a quick_check otherwise). The error wraps
// ErrDamaged with a *DamagedError; nothing is changed, created or removed.
// Nothing at all, and no mark, is a first start.
func Examine(ctx context.Context, db string) (Exam, error) {
	m, marked, err := readMark(db)
	if err != nil {
		return Exam{}, err
	}
	fi, err := os.Stat(db)
	switch {
	case errors.Is(err, os.ErrNotExist) && marked:
		return Exam{}, &DamagedError{Path: db, Found: fmt.Sprintf("no file, where the bot has kept its database since %s (%s says so)",
			m.Created.Format("2006-01-02 15:04:05Z07:00"), MarkPath(db))}
	case errors.Is(err, os.ErrNotExist):
		return Exam{First: true}, nil
	case err != nil:
		return Exam{}, fmt.Errorf("look at the database: %w", err)
	case fi.Size() == 0 && (marked || nonEmpty(db+"-wal")):
		return Exam{}, &DamagedError{Path: db, Found: "a zero-length file, where the bot had kept its database" + markSince(m, marked, db)}
	case fi.Size() == 0:
		return Exam{First: true}, nil
	}
	ex := Exam{Unclean: !marked || m.Open, Check: "quick_check"}
	if ex.Unclean {
		ex.Check = "integrity_check"
	}
	return ex, CheckFile(ctx, db, ex.Unclean)
}

func markSince(m mark, marked bool, db string) string {
	if !marked {
		return " (its -wal file is not empty)"
	}
	return fmt.Sprintf(" since %s (%s says so)", m.Created.Format("2006-01-02 15:04:05Z07:00"), MarkPath(db))
}

func nonEmpty(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 0
}
