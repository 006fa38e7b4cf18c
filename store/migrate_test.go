package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

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
