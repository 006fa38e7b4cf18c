package scheduler

import (
	"context"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/store"
)

// countingObserver sums what the scheduler tells it, by status.
type countingObserver struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *countingObserver) ScheduleRuns(status string, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[status] += n
}

func (o *countingObserver) counts() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

// recorded sums schedule id's records by status, a missed row for each
// slot it stands for: the oracle the observers' sums are checked against.
func recorded(t *testing.T, st *store.Store, id int64) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range runs(t, st, id) {
		n := 1
		if r.Missed > 0 {
			n = r.Missed
		}
		out[string(r.Status)] += n
	}
	return out
}

func add(into map[string]int, from map[string]int) {
	for k, v := range from {
		into[k] += v
	}
}

// TestObserverCountsEachSlotOnce: across three runs of the scheduler on
// one database — the first with a run skipped and one cut off, then a
// bot that died mid-run, then a restart that catches up — the observers
// together are told each recorded slot exactly once: a run a dead bot
// left running by the start that records it interrupted, missed slots
// by their count, and nothing again by a start with nothing new.
func TestObserverCountsEachSlotOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st := openStore(t, filepath.Join(t.TempDir(), "db"))
		sleepUntil(date("2026-01-01 00:00:30"))
		slow := &fakeRunner{fn: func(ctx context.Context, _ int, _ Schedule, _ time.Time) (Run, error) {
			return Run{}, sleepFor(ctx, 100*time.Second)
		}}
		first := &countingObserver{}
		s, stop := start(t, st, slow, Config{Observer: first})
		sc, err := s.Add(ctx, Schedule{Spec: "* * * * *", Overlap: OverlapSkip})
		if err != nil {
			t.Fatal(err)
		}
		sleepUntil(date("2026-01-01 00:03:30"))
		stop()
		if want := map[string]int{"succeeded": 1, "skipped": 1, "interrupted": 1}; !maps.Equal(first.counts(), want) {
			t.Errorf("first run told %v, want %v", first.counts(), want)
		}

		// A bot claims the next slot and dies during it: its row stays
		// "running", and nobody is told anything.
		sleepUntil(date("2026-01-01 00:04:00"))
		if ok, err := st.ClaimRun(ctx, sc.ID, date("2026-01-01 00:04:00"), time.Now()); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}

		sleepUntil(date("2026-01-01 02:00:10"))
		second := &countingObserver{}
		_, stop = start(t, st, &fakeRunner{}, Config{Observer: second})
		stop()
		if second.counts()["interrupted"] != 1 || second.counts()["missed"] == 0 || second.counts()["succeeded"] != 1 {
			t.Errorf("the restart told %v: want the dead bot's run interrupted, the missed slots, the caught-up run", second.counts())
		}

		third := &countingObserver{}
		_, stop = start(t, st, &fakeRunner{}, Config{Observer: third})
		stop()
		if len(third.counts()) != 0 {
			t.Errorf("a start with nothing new told %v", third.counts())
		}

		told := map[string]int{}
		add(told, first.counts())
		add(told, second.counts())
		if want := recorded(t, st, sc.ID); !maps.Equal(told, want) {
			t.Errorf("observers told %v; the store holds %v", told, want)
		}
	})
}
