package store

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"
)

// dataVersion is SQLite's own count, on conn, of the commits other
// connections made: the oracle that a probe's write reached the file.
func dataVersion(t *testing.T, conn *sql.Conn) int64 {
	t.Helper()
	var v int64
	if err := conn.QueryRowContext(t.Context(), "PRAGMA data_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestProbeWriteCommits: the probe commits a write that another
// connection sees as a change (data_version moves), and leaves the schema,
// its version and the header's application_id as they were.
func TestProbeWriteCommits(t *testing.T) {
	s := openTest(t)
	other := rawDB(t, s.Path(), "mode=ro")
	header := func() (schema []string, version int, appID int32) {
		if err := other.QueryRowContext(t.Context(), "PRAGMA application_id").Scan(&appID); err != nil {
			t.Fatal(err)
		}
		return schemaObjects(t, other), userVersion(t, other), appID
	}
	schema, version, appID := header()
	// data_version is per connection: hold the pool's one.
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		before := dataVersion(t, conn)
		if err := s.ProbeWrite(t.Context()); err != nil {
			t.Fatalf("probe of a writable database: %v", err)
		}
		if after := dataVersion(t, conn); after == before {
			t.Fatalf("data_version stayed %d: the probe committed nothing", after)
		}
	}
	conn.Close()
	if s2, v2, id2 := header(); !slices.Equal(s2, schema) || v2 != version || id2 != appID {
		t.Errorf("the probe changed the database: schema %v (was %v), version %d (was %d), application_id %d (was %d)",
			s2, schema, v2, version, id2, appID)
	}
}

// TestProbeWriteFails: a closed store, and a write lock another program
// holds, fail the probe (the latter once ctx ends, or SQLite's busy wait).
func TestProbeWriteFails(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		s, err := Open(t.Context(), t.TempDir()+"/db")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.ProbeWrite(t.Context()); err == nil {
			t.Error("a closed store passed the write probe")
		}
	})
	t.Run("locked", func(t *testing.T) {
		s := openTest(t)
		holder := rawDB(t, s.Path(), "_txlock=immediate")
		tx, err := holder.BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if err := s.ProbeWrite(ctx); err == nil {
			t.Error("the probe passed while another connection held the write lock")
		}
	})
}
