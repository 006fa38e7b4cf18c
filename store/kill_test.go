package store

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
