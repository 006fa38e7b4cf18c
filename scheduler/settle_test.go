package scheduler

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

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
