package store

import (
	"context"
	"fmt"
)

// ProbeWrite checks that the database takes a write now, as every record
// is written: on the store's one write connection it begins a write
// transaction (BEGIN IMMEDIATE: the write lock), writes the header's
// application_id back unchanged, and commits, so that a page goes through
// the WAL to the disk. Nothing a reader sees changes. A closed store, a
// read-only file, a lock held elsewhere, a full disk or an I/O error make
// it fail. It waits for the write connection and the lock as long as ctx
// allows; a caller that must answer in time bounds ctx and should not
// run two probes at once (SQLite's busy wait may outlast ctx by up to the
// busy timeout).
func (s *Store) ProbeWrite(ctx context.Context) error {
	tx, err := s.write.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return fmt.Errorf("write probe: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var id int32
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return fmt.Errorf("write probe: read: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", id)); err != nil {
		return fmt.Errorf("write probe: write: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write probe: commit: %w", err)
	}
	return nil
}
