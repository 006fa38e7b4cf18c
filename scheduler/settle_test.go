package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/internal/smallfs"
	"github.com/claudeops/claudeops/store"
)

// TestStartSettlesRunsLeftRunning: a bot that claimed a run and died a
// minute ago left it "running". A scheduler that owns its database settles
// it at start, whatever the run's timeout and whether its schedule fires
// again (it is paused here); one that may share the database leaves a run
// younger than its timeout alone: another process may be doing it.
func TestStartSettlesRunsLeftRunning(t *testing.T) {
	for _, c := range []struct {
		name string
		owns bool
		want store.RunStatus
	}{
		{"owns the database", true, store.RunInterrupted},
		{"may share it", false, store.RunRunning},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				st := openStore(t, filepath.Join(t.TempDir(), "db"))
				sleepUntil(date("2026-01-01 00:00:30"))
				id, err := st.AddSchedule(ctx, store.Schedule{Spec: "@hourly", Prompt: "p", Paused: true, Timeout: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				slot := date("2026-01-01 00:00:00")
				if ok, err := st.ClaimRun(ctx, id, slot, time.Now()); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
				sleepUntil(date("2026-01-01 00:01:30"))
				obs := &countingObserver{}
				_, stop := start(t, st, &fakeRunner{}, Config{Observer: obs, OwnsDatabase: c.owns})
				stop()
				rs := runs(t, st, id)
				if len(rs) != 1 || rs[0].Status != c.want {
					t.Fatalf("runs %v, want the one %s", rs, c.want)
				}
				if c.owns && (rs[0].Error != store.RunStoppedBeforeResult || obs.counts()["interrupted"] != 1) {
					t.Errorf("settled with %q, observer told %v", rs[0].Error, obs.counts())
				}
			})
		})
	}
}

// TestRunRecordRefusedThenTaken: the disk under the database fills up
// during a run, so its record is refused; the scheduler tries again until
// space is freed, and the run is then recorded as it ended, with its
// cost (read back from the SQLite file on a real full file system).
func TestRunRecordRefusedThenTaken(t *testing.T) {
	dir := smallfs.Mount(t, 16<<20)
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st := openStore(t, filepath.Join(dir, "db"))
		sleepUntil(date("2026-01-01 00:00:30"))
		var filler string
		full := &fakeRunner{fn: func(ctx context.Context, _ int, _ Schedule, _ time.Time) (Run, error) {
			filler = smallfs.Fill(t, dir, 0)
			return Run{Result: "done", CostUSD: 0.5}, nil
		}}
		s, stop := start(t, st, full, Config{OwnsDatabase: true})
		defer stop()
		sc, err := s.Add(ctx, Schedule{Spec: "0 3 * * *"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RunNow(ctx, sc.ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if rs := runs(t, st, sc.ID); len(rs) != 1 || rs[0].Status != store.RunRunning {
			t.Fatalf("runs on the full disk %v; want the one still running (its record refused)", rs)
		}
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if rs := runs(t, st, sc.ID); len(rs) != 1 || rs[0].Status != store.RunSucceeded || rs[0].CostUSD != 0.5 {
			t.Errorf("runs once space is freed %v; want the one succeeded, $0.5", rs)
		}
	})
}
