package store

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
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
		"index received_messages_received_at",
		"index threads_last_activity",
		"index turns_channel_ended",
		"index turns_thread_ended",
		"table approvals",
		"table audit",
		"table channels",
		"table chat_accounts",
		"table received_messages",
		"table rules", "table schedule_runs", "table schedules",
		"table sync_cursors",
		"table threads",
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

// countingMigrations returns n migrations that each create table t<i> and log
// their number; fail (1-based, 0 for none) creates its table and then fails.
func countingMigrations(n, fail int, mu *sync.Mutex, log *[]int) []migration {
	var ms []migration
	for i := 1; i <= n; i++ {
		ms = append(ms, migration{name: fmt.Sprintf("t%d", i), up: func(ctx context.Context, tx *sql.Tx) error {
			mu.Lock()
			*log = append(*log, i)
			mu.Unlock()
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("CREATE TABLE t%d (x)", i)); err != nil {
				return err
			}
			if i == fail {
				return errors.New("boom")
			}
			return nil
		}})
	}
	return ms
}

func TestMigrate(t *testing.T) {
	type step struct {
		n, fail     int    // migrations known and the failing one
		wantApplied []int  // migrations run by this open
		wantVersion int    // user_version afterwards
		wantErr     string // substring; "" for success
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"from empty", []step{{n: 3, wantApplied: []int{1, 2, 3}, wantVersion: 3}}},
		{"from a partial version", []step{
			{n: 1, wantApplied: []int{1}, wantVersion: 1},
			{n: 3, wantApplied: []int{2, 3}, wantVersion: 3},
		}},
		{"up to date runs nothing", []step{
			{n: 2, wantApplied: []int{1, 2}, wantVersion: 2},
			{n: 2, wantVersion: 2},
			{n: 2, wantVersion: 2},
		}},
		{"a failing step rolls back alone", []step{
			{n: 3, fail: 2, wantApplied: []int{1, 2}, wantVersion: 1, wantErr: "migrate to version 2 (t2): boom"},
			{n: 3, wantApplied: []int{2, 3}, wantVersion: 3},
		}},
		{"newer than known", []step{
			{n: 3, wantApplied: []int{1, 2, 3}, wantVersion: 3},
			{n: 2, wantVersion: 3, wantErr: "database schema version 3 is newer than this claudeops (2)"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			for i, st := range tc.steps {
				var mu sync.Mutex
				var log []int
				s, err := open(t.Context(), path, countingMigrations(st.n, st.fail, &mu, &log))
				if st.wantErr == "" && err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)) {
					t.Fatalf("step %d: error %v, want %q", i, err, st.wantErr)
				}
				if err == nil {
					s.Close()
				}
				if !slices.Equal(log, st.wantApplied) {
					t.Errorf("step %d applied %v, want %v", i, log, st.wantApplied)
				}
				raw := rawDB(t, path, "")
				if v := userVersion(t, raw); v != st.wantVersion {
					t.Errorf("step %d: user_version = %d, want %d", i, v, st.wantVersion)
				}
				// Tables exist exactly for the versions applied.
				var tables int
				if err := raw.QueryRowContext(t.Context(),
					`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name GLOB 't[0-9]*'`).Scan(&tables); err != nil {
					t.Fatal(err)
				}
				if tables != st.wantVersion {
					t.Errorf("step %d: %d tables for version %d", i, tables, st.wantVersion)
				}
				raw.Close()
			}
		})
	}
}

func TestMigrateConcurrentOpensApplyEachStepOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	var mu sync.Mutex
	var log []int
	ms := countingMigrations(5, 0, &mu, &log)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			s, err := open(t.Context(), path, ms)
			if err != nil {
				t.Error(err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	if !slices.Equal(log, []int{1, 2, 3, 4, 5}) {
		t.Errorf("applied %v, want each of 1..5 once, in order", log)
	}
}

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

// Kill mid-transaction. The helper process commits one transaction, begins
// another, writes into it (optionally enough to spill pages into the WAL),
// says "ready" and waits to be SIGKILLed. After the kill, nothing of the open
// transaction may be visible and the database must be intact.

// helperMigrations are the migrations the "migrate" helper dies in: version 2
// never commits there.
func helperMigrations(block bool) []migration {
	return []migration{
		sqlMigration("one", `CREATE TABLE one (x); INSERT INTO one VALUES (1)`),
		{name: "two", up: func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE two (x); INSERT INTO two VALUES (2)`); err != nil {
				return err
			}
			if block {
				fmt.Println("ready")
				time.Sleep(time.Hour)
			}
			return nil
		}},
	}
}

func runHelper(mode, path, arg string) error {
	ctx := context.Background()
	switch mode {
	case "tx":
		var rows, pad int
		if _, err := fmt.Sscanf(arg, "%d %d", &rows, &pad); err != nil {
			return err
		}
		s, err := Open(ctx, path)
		if err != nil {
			return err
		}
		for i := range 5 {
			if _, err := s.RecordMessage(ctx, ReceivedMessage{Platform: "committed", Key: strconv.Itoa(i)}); err != nil {
				return err
			}
		}
		c, err := s.write.Conn(ctx)
		if err != nil {
			return err
		}
		// A tiny page cache makes a large transaction spill its dirty pages
		// into the WAL before commit, as a real one would under memory pressure.
		if _, err := c.ExecContext(ctx, "PRAGMA cache_size = 8"); err != nil {
			return err
		}
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		text := strings.Repeat("x", pad)
		for i := range rows {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO received_messages (platform, key, text) VALUES ('uncommitted', ?, ?)`,
				strconv.Itoa(i), text); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE received_messages SET text = 'changed' WHERE platform = 'committed'`); err != nil {
			return err
		}
		fmt.Println("ready")
		time.Sleep(time.Hour) // a timer, not select{}: the runtime would call that a deadlock
		return errors.New("not killed")
	case "migrate":
		_, err := open(ctx, path, helperMigrations(true))
		if err != nil {
			return err
		}
		return errors.New("not killed")
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// startHelper runs the helper and waits until it has said "ready".
func startHelper(t *testing.T, mode, path, arg string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envHelperDB+"="+path, envHelperArg+"="+arg)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("helper said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("helper: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("helper never became ready")
	}
	return cmd
}

func killHelper(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper ended with %v, want SIGKILL", err)
	}
}

func integrityOK(t *testing.T, q querier) {
	t.Helper()
	var check string
	if err := q.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
}

func TestKillMidTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns helper processes")
	}
	for _, tc := range []struct {
		name       string
		rows, pad  int
		minWALSize int64 // uncommitted bytes that must be on disk before the kill
	}{
		{name: "small transaction", rows: 10, pad: 16},
		{name: "transaction spilled into the WAL", rows: 3000, pad: 1000, minWALSize: 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "claudeops.db")
			cmd := startHelper(t, "tx", path, fmt.Sprintf("%d %d", tc.rows, tc.pad))

			if tc.minWALSize > 0 {
				fi, err := os.Stat(path + "-wal")
				if err != nil || fi.Size() < tc.minWALSize {
					t.Fatalf("WAL before the kill: %v, %v; want >= %d bytes", fi, err, tc.minWALSize)
				}
			}
			// While the helper lives, another process sees only its commit.
			peek := rawDB(t, path, "mode=ro")
			var n int
			if err := peek.QueryRowContext(ctx, `SELECT count(*) FROM received_messages`).Scan(&n); err != nil || n != 5 {
				t.Fatalf("rows visible beside the open transaction: %d, %v; want 5", n, err)
			}
			peek.Close()

			killHelper(t, cmd)

			s := openAt(t, path)
			integrityOK(t, s.read)
			counts := map[string]int{}
			rows, err := s.read.QueryContext(ctx, `SELECT platform || '/' || text, count(*) FROM received_messages GROUP BY 1`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var p string
				var c int
				if err := rows.Scan(&p, &c); err != nil {
					t.Fatal(err)
				}
				counts[p] = c
			}
			rows.Close()
			if want := map[string]int{"committed/": 5}; fmt.Sprint(counts) != fmt.Sprint(want) {
				t.Errorf("after the kill: %v, want %v (committed rows unchanged, none of the open transaction)", counts, want)
			}
			// The store works, and the dead transaction's keys are fresh.
			fresh, err := s.RecordMessage(ctx, ReceivedMessage{Platform: "uncommitted", Key: "0"})
			if err != nil || !fresh {
				t.Errorf("RecordMessage after the kill: fresh=%v err=%v", fresh, err)
			}
			integrityOK(t, s.write)
		})
	}

	t.Run("migration", func(t *testing.T) {
		ctx := t.Context()
		path := filepath.Join(t.TempDir(), "claudeops.db")
		killHelper(t, startHelper(t, "migrate", path, ""))

		raw := rawDB(t, path, "")
		integrityOK(t, raw)
		if v := userVersion(t, raw); v != 1 {
			t.Errorf("user_version after a kill in migration 2 = %d, want 1", v)
		}
		if got := schemaObjects(t, raw); !slices.Equal(got, []string{"table one"}) {
			t.Errorf("schema after the kill: %q, want only migration 1's", got)
		}
		raw.Close()

		s, err := open(ctx, path, helperMigrations(false))
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer s.Close()
		if v := userVersion(t, s.read); v != 2 {
			t.Errorf("user_version after reopen = %d, want 2", v)
		}
		var two int
		if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM two`).Scan(&two); err != nil || two != 1 {
			t.Errorf("table two: %d rows, %v; want 1", two, err)
		}
	})
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
