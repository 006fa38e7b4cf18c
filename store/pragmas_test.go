package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

type pragmas struct {
	journalMode string
	foreignKeys int
	synchronous int
	busyTimeout int
}

var wantPragmas = pragmas{journalMode: "wal", foreignKeys: 1, synchronous: 2, busyTimeout: 10000}

type querier interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

func readPragmas(ctx context.Context, q querier) (pragmas, error) {
	var p pragmas
	for _, x := range []struct {
		name string
		dst  any
	}{
		{"journal_mode", &p.journalMode},
		{"foreign_keys", &p.foreignKeys},
		{"synchronous", &p.synchronous},
		{"busy_timeout", &p.busyTimeout},
	} {
		if err := q.QueryRowContext(ctx, "PRAGMA "+x.name).Scan(x.dst); err != nil {
			return p, fmt.Errorf("PRAGMA %s: %w", x.name, err)
		}
	}
	return p, nil
}

func TestPragmasOnEveryConnection(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)

	t.Run("read pool, concurrent transactions", func(t *testing.T) {
		// Holding n transactions at once forces n distinct connections.
		const n = 4
		var txs []*sql.Tx
		for range n {
			tx, err := s.read.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			txs = append(txs, tx)
		}
		if open := s.read.Stats().OpenConnections; open < n {
			t.Errorf("%d open read connections, want >= %d", open, n)
		}
		for i, tx := range txs {
			p, err := readPragmas(ctx, tx)
			if err != nil {
				t.Fatal(err)
			}
			if p != wantPragmas {
				t.Errorf("read connection %d: %+v, want %+v", i, p, wantPragmas)
			}
			// A read transaction really is one: it can read.
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM threads").Scan(&n); err != nil {
				t.Error(err)
			}
		}
		for _, tx := range txs {
			tx.Rollback()
		}
	})

	t.Run("read pool is read-only", func(t *testing.T) {
		_, err := s.read.ExecContext(ctx, `INSERT INTO channels (key) VALUES ('x')`)
		var se sqlite3.Error
		if !errors.As(err, &se) || se.Code != sqlite3.ErrReadonly {
			t.Errorf("write through the read pool: %v, want SQLITE_READONLY", err)
		}
	})

	t.Run("write pool, successive connections", func(t *testing.T) {
		if max := s.write.Stats().MaxOpenConnections; max != 1 {
			t.Errorf("write pool MaxOpenConnections = %d, want 1", max)
		}
		for i := range 3 {
			c, err := s.write.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// A temp table lives only as long as its connection: finding
			// none proves the pool gave us a new one.
			var marked int
			if err := c.QueryRowContext(ctx,
				`SELECT count(*) FROM temp.sqlite_schema WHERE name = 'marker'`).Scan(&marked); err != nil {
				t.Fatal(err)
			}
			if marked != 0 {
				t.Fatalf("connection %d is not new", i)
			}
			p, err := readPragmas(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if p != wantPragmas {
				t.Errorf("write connection %d: %+v, want %+v", i, p, wantPragmas)
			}
			if _, err := c.ExecContext(ctx, `CREATE TEMP TABLE marker (x)`); err != nil {
				t.Fatal(err)
			}
			// ErrBadConn makes database/sql discard the connection.
			c.Raw(func(any) error { return driver.ErrBadConn })
			c.Close()
		}
	})

	t.Run("write transactions begin immediate", func(t *testing.T) {
		tx, err := s.write.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		// The store's transaction has run no statement, yet it holds the
		// write lock: another connection cannot begin writing.
		other := rawDB(t, s.Path(), "_busy_timeout=0")
		_, err = other.ExecContext(ctx, "BEGIN IMMEDIATE")
		var se sqlite3.Error
		if !errors.As(err, &se) || se.Code != sqlite3.ErrBusy {
			t.Errorf("BEGIN IMMEDIATE beside a store transaction: %v, want SQLITE_BUSY", err)
		}
	})
}

// TestBusyLockWaits holds the write lock from another connection, as another
// process would, while the store writes: busy_timeout makes the store wait
// for the lock rather than fail, and readers are not blocked at all.
func TestBusyLockWaits(t *testing.T) {
	const hold = 300 * time.Millisecond
	t0 := time.UnixMilli(1_700_000_000_000).UTC()
	for _, tc := range []struct {
		name  string
		setup func(ctx context.Context, s *Store) error
		write func(ctx context.Context, s *Store) error
	}{
		{"RecordMessage", nil, func(ctx context.Context, s *Store) error {
			fresh, err := s.RecordMessage(ctx, ReceivedMessage{Platform: "slack", Key: "T/C/1.0", ReceivedAt: t0})
			if err == nil && !fresh {
				err = errors.New("not fresh")
			}
			return err
		}},
		{"SaveThread", nil, func(ctx context.Context, s *Store) error {
			return s.SaveThread(ctx, Thread{Key: "k", State: "running", LastActivity: t0})
		}},
		{"StartTurn", nil, func(ctx context.Context, s *Store) error {
			_, err := s.StartTurn(ctx, Turn{ThreadKey: "k", StartedAt: t0})
			return err
		}},
		{"DecideApproval", func(ctx context.Context, s *Store) error {
			return s.SaveApproval(ctx, Approval{ID: "a1", State: "pending", CreatedAt: t0})
		}, func(ctx context.Context, s *Store) error {
			won, err := s.DecideApproval(ctx, "a1", "pending", Approval{State: "allowed", DecidedBy: "U1", DecidedAt: t0})
			if err == nil && !won {
				err = errors.New("lost")
			}
			return err
		}},
		{"AddRule", nil, func(ctx context.Context, s *Store) error {
			_, err := s.AddRule(ctx, Rule{Scope: "global", Effect: "allow", Tool: "Read"})
			return err
		}},
		{"Audit", nil, func(ctx context.Context, s *Store) error {
			return s.Audit(ctx, AuditEntry{At: t0, Action: "decide"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := openTest(t)
			if tc.setup != nil {
				if err := tc.setup(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			other := rawDB(t, s.Path(), "_txlock=immediate")
			tx, err := other.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO channels (key, cwd) VALUES ('blocker', '/tmp')`); err != nil {
				t.Fatal(err)
			}

			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- tc.write(ctx, s) }()

			// Readers see the last commit while the lock is held.
			if _, ok, err := s.GetChannel(ctx, "blocker"); err != nil || ok {
				t.Errorf("read during the lock: ok=%v err=%v, want the committed state", ok, err)
			}
			select {
			case err := <-done:
				t.Fatalf("write returned while another connection held the lock: %v", err)
			case <-time.After(hold):
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("write after waiting: %v", err)
				}
			case <-time.After(busyTimeout):
				t.Fatal("write still blocked after the lock was released")
			}
			if waited := time.Since(start); waited < hold {
				t.Errorf("write took %v, less than the %v the lock was held", waited, hold)
			}
			if _, ok, err := s.GetChannel(ctx, "blocker"); err != nil || !ok {
				t.Errorf("blocker's commit: ok=%v err=%v", ok, err)
			}
		})
	}
}
