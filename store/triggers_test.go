package store

import (
	"context"
	"testing"
	"time"
)

// TestPruneTriggers: what is older than the cutoff goes, a run under way
// never, and a delivery forgotten is fresh again (the documented cost).
func TestPruneTriggers(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-100*24*time.Hour), now.Add(-time.Hour)
	for _, d := range []struct {
		id string
		at time.Time
	}{{"old", old}, {"recent", recent}} {
		if fresh, err := s.TriggerDelivered(ctx, "ci", d.id, d.at); err != nil || !fresh {
			t.Fatalf("deliver %s: %v %v", d.id, fresh, err)
		}
	}
	for _, r := range []struct {
		at  time.Time
		end bool
	}{{old, true}, {old, false}, {recent, true}} {
		id, ok, err := s.StartTriggerRun(ctx, TriggerRun{Trigger: "ci", StartedAt: r.at}, 10)
		if err != nil || !ok {
			t.Fatalf("start run: %v %v", ok, err)
		}
		if r.end {
			if err := s.EndTriggerRun(ctx, id, TriggerRun{EndedAt: r.at, Status: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := s.PruneTriggers(ctx, now.Add(-90*24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PruneTriggers = %d, %v; want 2 (the old delivery, the old ended run)", n, err)
	}
	runs, err := s.TriggerRuns(ctx, "ci", 10)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs left: %+v %v; want the recent one and the one still running", runs, err)
	}
	if fresh, _ := s.TriggerDelivered(ctx, "ci", "recent", now); fresh {
		t.Error("a recent delivery is taken again after the prune")
	}
	if fresh, _ := s.TriggerDelivered(ctx, "ci", "old", now); !fresh {
		t.Error("the pruned delivery was not forgotten")
	}
}
