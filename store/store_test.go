package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The kill tests re-exec this test binary as a helper process that writes to
// a store and is SIGKILLed mid-transaction.
const (
	envHelper    = "CLAUDEOPS_STORE_TEST_HELPER"
	envHelperDB  = "CLAUDEOPS_STORE_TEST_DB"
	envHelperArg = "CLAUDEOPS_STORE_TEST_ARG"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelper); mode != "" {
		if err := runHelper(mode, os.Getenv(envHelperDB), os.Getenv(envHelperArg)); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// openTest opens a store in a fresh directory (one level deeper than
// t.TempDir, so Open has a parent to create) and closes it at cleanup.
func openTest(t testing.TB) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "state", "claudeops.db"))
}

func openAt(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// rawDB opens path with a plain single-connection pool, outside the Store, as
// another program would. query is the DSN's query string.
func rawDB(t testing.TB, path, query string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?"+query)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func userVersion(t testing.TB, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) int {
	t.Helper()
	var v int
	if err := q.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&v); err != nil {
		t.Fatalf("user_version: %v", err)
	}
	return v
}

func schemaObjects(t testing.TB, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(),
		`SELECT type || ' ' || name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestOpenMigratesFromEmpty(t *testing.T) {
	s := openTest(t)
	if _, err := os.Stat(s.Path()); err != nil {
		t.Fatalf("database file: %v", err)
	}
	if got := userVersion(t, s.read); got != SchemaVersion() || got != len(migrations) {
		t.Errorf("user_version = %d, want %d", got, SchemaVersion())
	}
	want := []string{
		"index approvals_pending",
		"index audit_at",
		"index audit_thread_at",
		"index facts_channel",
		"index pull_requests_schedule", "index pull_requests_thread",
		"index received_messages_received_at",
		"index received_messages_unsettled",
		"index threads_last_activity",
		"index threads_worktree",
		"index trigger_runs_trigger",
		"index turns_channel_ended",
		"index turns_notice_owed",
		"index turns_running",
		"index turns_thread_ended",
		"table approvals",
		"table audit",
		"table channel_mcp_servers", "table channels",
		"table chat_accounts",
		"table facts",
		"table pull_requests",
		"table received_messages",
		"table rules", "table schedule_runs", "table schedules", "table scope_settings",
		"table session_processes",
		"table sync_cursors",
		"table threads",
		"table tool_lines",
		"table trigger_counts", "table trigger_deliveries", "table trigger_runs",
		"table turns",
	}
	if got := schemaObjects(t, s.read); !slices.Equal(got, want) {
		t.Errorf("schema objects:\n got %q\nwant %q", got, want)
	}
	var check string
	if err := s.read.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	notDB := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{
		{"empty path", ""},
		{"parent is a file", filepath.Join(notDir, "claudeops.db")},
		{"not a database", notDB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.Context(), tc.path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.HasPrefix(err.Error(), "open store ") {
				t.Errorf("error %q lacks the operation", err)
			}
		})
	}
}

func TestOpenIdempotent(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, path string)
	}{
		{"reopen after close keeps data", func(t *testing.T, path string) {
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SaveThread(ctx, Thread{Key: "console/console/main", State: "idle"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				s := openAt(t, path)
				if _, ok, err := s.GetThread(ctx, "console/console/main"); err != nil || !ok {
					t.Fatalf("after reopen: ok=%v err=%v", ok, err)
				}
				if v := userVersion(t, s.read); v != SchemaVersion() {
					t.Fatalf("user_version = %d", v)
				}
			}
		}},
		{"two stores open at once", func(t *testing.T, path string) {
			a := openAt(t, path)
			b := openAt(t, path)
			if err := a.SaveChannel(ctx, Channel{Key: "c1", Cwd: "/srv"}); err != nil {
				t.Fatal(err)
			}
			c, ok, err := b.GetChannel(ctx, "c1")
			if err != nil || !ok || c.Cwd != "/srv" {
				t.Fatalf("other store sees %+v ok=%v err=%v", c, ok, err)
			}
		}},
		{"concurrent opens of a fresh file", func(t *testing.T, path string) {
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Go(func() {
					s, err := Open(ctx, path)
					if err != nil {
						errs <- err
						return
					}
					errs <- s.Close()
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			s := openAt(t, path)
			if v := userVersion(t, s.read); v != SchemaVersion() {
				t.Fatalf("user_version = %d", v)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, filepath.Join(t.TempDir(), "claudeops.db"))
		})
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	known := SchemaVersion()
	for _, have := range []int{known + 1, known + 5} {
		t.Run(strconv.Itoa(have), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "claudeops.db")
			s := openAt(t, path)
			if err := s.SaveThread(t.Context(), Thread{Key: "k"}); err != nil {
				t.Fatal(err)
			}
			raw := rawDB(t, path, "")
			if _, err := raw.ExecContext(t.Context(), fmt.Sprintf("PRAGMA user_version = %d", have)); err != nil {
				t.Fatal(err)
			}

			s2, err := Open(t.Context(), path)
			if err == nil {
				s2.Close()
				t.Fatal("Open accepted a newer schema")
			}
			if !errors.Is(err, ErrNewerSchema) {
				t.Errorf("error %v does not wrap ErrNewerSchema", err)
			}
			var sv *SchemaVersionError
			if !errors.As(err, &sv) || sv.Have != have || sv.Known != known {
				t.Errorf("SchemaVersionError = %+v", sv)
			}
			want := fmt.Sprintf("database schema version %d is newer than this claudeops (%d); upgrade claudeops or use another CLAUDEOPS_DB", have, known)
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error = %q, want it to name %s and say %q", err, path, want)
			}
			if v := userVersion(t, raw); v != have {
				t.Errorf("refused Open changed user_version to %d", v)
			}
		})
	}
}

// TestQueryPlansUseIndexes keeps the indexes in step with the queries.
func TestQueryPlansUseIndexes(t *testing.T) {
	s := openTest(t)
	for _, tc := range []struct{ query, want string }{
		{`SELECT 1 FROM received_messages WHERE platform = 'p' AND key = 'k'`, "sqlite_autoindex_received_messages_1"},
		{`DELETE FROM received_messages WHERE received_at < 5`, "received_messages_received_at"},
		{`SELECT * FROM threads ORDER BY last_activity DESC, key`, "threads_last_activity"},
		{usageSelect + `WHERE thread_key = 'k' AND ended_at IS NOT NULL`, "turns_thread_ended"},
		{usageSelect + `WHERE channel_key = 'c' AND ended_at >= 5`, "turns_channel_ended"},
		{`SELECT * FROM approvals WHERE state = 'pending' ORDER BY created_at, id`, "approvals_pending"},
		{`SELECT * FROM audit ORDER BY at DESC, id DESC LIMIT 10`, "audit_at"},
		{`SELECT * FROM audit WHERE thread_key = 't' ORDER BY at DESC, id DESC LIMIT 10`, "audit_thread_at"},
	} {
		rows, err := s.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+tc.query)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, "\n"), tc.want) {
			t.Errorf("%s\nplan %q does not use %s", tc.query, plan, tc.want)
		}
	}
}
