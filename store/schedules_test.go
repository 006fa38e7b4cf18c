package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func testSchedule() Schedule {
	return Schedule{
		Spec: "CRON_TZ=Europe/Berlin 30 2 * * *", TimeZone: "Europe/Berlin", Prompt: "update deps",
		Platform: "slack", Channel: "slack/T1/C1", Cwd: "/srv/api", Model: "opus", CreatedBy: "U1",
		ApprovalPolicy: "park", Timeout: 90 * time.Second, Overlap: "queue", CatchUp: 2 * time.Hour,
		Push: true, CreatedAt: tNs, UpdatedAt: tNs,
	}
}

func TestSchedulesCRUD(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)

	if _, ok, err := s.GetSchedule(ctx, 1); ok || err != nil {
		t.Fatalf("GetSchedule on empty = %v, %v", ok, err)
	}
	in := testSchedule()
	id, err := s.AddSchedule(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.GetSchedule(ctx, id)
	if !ok || err != nil {
		t.Fatalf("GetSchedule = %v, %v", ok, err)
	}
	want := in
	want.ID, want.CreatedAt, want.UpdatedAt = id, ms(tNs), ms(tNs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetSchedule:\n got %+v\nwant %+v", got, want)
	}

	// Update replaces everything but CreatedAt.
	up := want
	up.Spec, up.Prompt, up.Overlap, up.Paused, up.Push = "@hourly", "other", "skip", true, false
	up.CreatedAt, up.UpdatedAt = t3, t2
	if err := s.UpdateSchedule(ctx, up); err != nil {
		t.Fatal(err)
	}
	got, _, _ = s.GetSchedule(ctx, id)
	up.CreatedAt = ms(tNs)
	if !reflect.DeepEqual(got, up) {
		t.Errorf("after update:\n got %+v\nwant %+v", got, up)
	}
	if err := s.UpdateSchedule(ctx, Schedule{ID: 999}); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateSchedule(999) = %v, want ErrNotFound", err)
	}

	if err := s.SetPaused(ctx, id, false, t3); err != nil {
		t.Fatal(err)
	}
	got, _, _ = s.GetSchedule(ctx, id)
	if got.Paused || !got.UpdatedAt.Equal(t3) {
		t.Errorf("after SetPaused(false): paused %v updated %v", got.Paused, got.UpdatedAt)
	}
	if err := s.SetPaused(ctx, 999, true, t3); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetPaused(999) = %v, want ErrNotFound", err)
	}

	id2, err := s.AddSchedule(ctx, Schedule{Spec: "@daily"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListSchedules(ctx)
	if err != nil || len(list) != 2 || list[0].ID != id || list[1].ID != id2 {
		t.Fatalf("ListSchedules = %+v, %v", list, err)
	}
	if list[1].CreatedAt != (time.Time{}) {
		t.Errorf("zero CreatedAt came back as %v", list[1].CreatedAt)
	}

	// Deleting takes the runs along, and ids are not reused.
	if ok, err := s.ClaimRun(ctx, id, t1, t1); !ok || err != nil {
		t.Fatalf("ClaimRun = %v, %v", ok, err)
	}
	if ok, err := s.DeleteSchedule(ctx, id); !ok || err != nil {
		t.Fatalf("DeleteSchedule = %v, %v", ok, err)
	}
	if ok, err := s.DeleteSchedule(ctx, id); ok || err != nil {
		t.Fatalf("DeleteSchedule again = %v, %v", ok, err)
	}
	if rs, err := s.Runs(ctx, id, 0); len(rs) != 0 || err != nil {
		t.Errorf("runs of deleted schedule = %v, %v", rs, err)
	}
	if _, err := s.ClaimRun(ctx, id, t2, t2); err == nil {
		t.Errorf("ClaimRun on deleted schedule succeeded")
	}
	id3, _ := s.AddSchedule(ctx, Schedule{Spec: "@daily"})
	if id3 <= id2 {
		t.Errorf("new id %d reuses a deleted one (<= %d)", id3, id2)
	}
}

func TestScheduleRuns(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	id, err := s.AddSchedule(ctx, testSchedule())
	if err != nil {
		t.Fatal(err)
	}

	if _, ok, err := s.LastSlot(ctx, id); ok || err != nil {
		t.Fatalf("LastSlot on no runs = %v, %v", ok, err)
	}

	slot := time.Date(2026, 1, 2, 1, 0, 0, 123_456_789, berlin) // ns and a zone: keyed at ms precision, before t1
	if ok, err := s.ClaimRun(ctx, id, slot, t1); !ok || err != nil {
		t.Fatalf("ClaimRun = %v, %v", ok, err)
	}
	if ok, err := s.ClaimRun(ctx, id, ms(slot), t2); ok || err != nil {
		t.Fatalf("second ClaimRun of the same slot = %v, %v; want false", ok, err)
	}
	if ok, err := s.RecordRun(ctx, ScheduleRun{ScheduleID: id, Slot: slot, Status: RunSkipped}); ok || err != nil {
		t.Fatalf("RecordRun over a claimed slot = %v, %v; want false", ok, err)
	}
	rs, err := s.Runs(ctx, id, 0)
	if err != nil || len(rs) != 1 {
		t.Fatalf("Runs = %v, %v", rs, err)
	}
	if r := rs[0]; r.Status != RunRunning || !r.Slot.Equal(ms(slot)) || !r.StartedAt.Equal(t1) || !r.EndedAt.IsZero() {
		t.Errorf("claimed run = %+v", r)
	}

	fin := ScheduleRun{ScheduleID: id, Slot: slot, EndedAt: t3, Status: RunSucceeded, SessionID: "sess",
		ThreadKey: "slack/C1/9.9", Result: "done", CostUSD: 0.25, InputTokens: 10, OutputTokens: 20, NumTurns: 3,
		Branch: "claudeops/schedule-1-20260102-0304", Commit: "89abcdef"}
	if err := s.FinishRun(ctx, fin); err != nil {
		t.Fatal(err)
	}
	rs, _ = s.Runs(ctx, id, 0)
	want := fin
	want.ID, want.Slot, want.StartedAt = rs[0].ID, ms(slot), t1 // a zero StartedAt keeps the claim's
	if !reflect.DeepEqual(rs[0], want) {
		t.Errorf("finished run:\n got %+v\nwant %+v", rs[0], want)
	}
	if err := s.FinishRun(ctx, ScheduleRun{ScheduleID: id, Slot: t3, Status: RunFailed}); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun of an unclaimed slot = %v, want ErrNotFound", err)
	}
	// A queued run's real start replaces the claim time.
	if ok, _ := s.ClaimRun(ctx, id, t2, t2); !ok {
		t.Fatal("claim t2")
	}
	if err := s.FinishRun(ctx, ScheduleRun{ScheduleID: id, Slot: t2, StartedAt: t3, EndedAt: t3, Status: RunFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}

	if ok, err := s.RecordRun(ctx, ScheduleRun{ScheduleID: id, Slot: t3, StartedAt: t3, EndedAt: t3,
		Status: RunMissed, Missed: 12960}); !ok || err != nil {
		t.Fatalf("RecordRun missed = %v, %v", ok, err)
	}
	last, ok, err := s.LastSlot(ctx, id)
	if !ok || err != nil || !last.Equal(t3) {
		t.Errorf("LastSlot = %v, %v, %v; want %v", last, ok, err, t3)
	}

	rs, _ = s.Runs(ctx, id, 2)
	if len(rs) != 2 || !rs[0].Slot.Equal(t3) || rs[0].Missed != 12960 || rs[0].Status != RunMissed ||
		!rs[1].Slot.Equal(t2) || !rs[1].StartedAt.Equal(t3) || rs[1].Error != "boom" {
		t.Errorf("Runs(limit 2) = %+v", rs)
	}
	// Other schedules' runs are separate.
	other, _ := s.AddSchedule(ctx, Schedule{Spec: "@daily"})
	if ok, _ := s.ClaimRun(ctx, other, t3, t3); !ok {
		t.Error("the same slot of another schedule is free")
	}
	if rs, _ := s.Runs(ctx, id, 0); len(rs) != 3 {
		t.Errorf("Runs = %d rows, want 3", len(rs))
	}
}

func TestPruneRuns(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	id, _ := s.AddSchedule(ctx, testSchedule())
	other, _ := s.AddSchedule(ctx, testSchedule())
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	slot := func(i int) time.Time { return base.Add(time.Duration(i) * time.Hour) }
	// Slots 0..9; slot 1 is still running (a long one), the rest finished.
	for i := range 10 {
		st := RunSucceeded
		if i == 1 {
			st = RunRunning
		}
		if ok, err := s.RecordRun(ctx, ScheduleRun{ScheduleID: id, Slot: slot(i), Status: st}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	s.RecordRun(ctx, ScheduleRun{ScheduleID: other, Slot: slot(0), Status: RunSucceeded})

	n, err := s.PruneRuns(ctx, id, 3)
	if err != nil || n != 6 {
		t.Fatalf("PruneRuns(3) = %d, %v; want 6", n, err)
	}
	rs, _ := s.Runs(ctx, id, 0)
	var slots []int
	for _, r := range rs {
		slots = append(slots, int(r.Slot.Sub(base)/time.Hour))
	}
	if !reflect.DeepEqual(slots, []int{9, 8, 7, 1}) {
		t.Errorf("kept slots %v, want [9 8 7 1] (the running one survives)", slots)
	}
	if n, err := s.PruneRuns(ctx, id, 0); err != nil || n != 3 {
		t.Errorf("PruneRuns(0) = %d, %v; want 3", n, err)
	}
	if rs, _ := s.Runs(ctx, id, 0); len(rs) != 1 || rs[0].Status != RunRunning {
		t.Errorf("after PruneRuns(0): %+v", rs)
	}
	if rs, _ := s.Runs(ctx, other, 0); len(rs) != 1 {
		t.Errorf("other schedule's runs pruned: %+v", rs)
	}
}

// TestClaimRunTwoProcesses: two Stores on one file (as two bot processes)
// race to claim the same slots; each slot goes to exactly one.
func TestClaimRunTwoProcesses(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "claudeops.db")
	a, b := openAt(t, path), openAt(t, path)
	id, err := a.AddSchedule(ctx, testSchedule())
	if err != nil {
		t.Fatal(err)
	}
	const slots = 50
	var won [2]atomic.Int64
	var wg sync.WaitGroup
	for i, st := range []*Store{a, b, a, b} {
		wg.Go(func() {
			for k := range slots {
				ok, err := st.ClaimRun(ctx, id, t1.Add(time.Duration(k)*time.Minute), t1)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					won[i%2].Add(1)
				}
			}
		})
	}
	wg.Wait()
	if total := won[0].Load() + won[1].Load(); total != slots {
		t.Errorf("claims won: %d + %d = %d, want %d", won[0].Load(), won[1].Load(), total, slots)
	}
	if rs, _ := b.Runs(ctx, id, 0); len(rs) != slots {
		t.Errorf("rows = %d, want %d", len(rs), slots)
	}
}

func TestScheduleQueryPlansUseIndexes(t *testing.T) {
	s := openTest(t)
	for _, q := range []string{
		`SELECT ` + runColumns + ` FROM schedule_runs WHERE schedule_id = 1 ORDER BY slot DESC LIMIT 5`,
		`SELECT max(slot) FROM schedule_runs WHERE schedule_id = 1`,
		`SELECT id FROM schedule_runs WHERE schedule_id = 1 ORDER BY slot DESC LIMIT 5`,
	} {
		var plan []string
		rows, err := s.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "sqlite_autoindex_schedule_runs_1") || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%s\nplan %q does not use the (schedule_id, slot) index", q, plan)
		}
	}
}

func TestInterruptStaleRuns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	id, err := s.AddSchedule(ctx, Schedule{Spec: "@hourly", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	for i, started := range []time.Time{base, base.Add(2 * time.Hour)} {
		slot := base.Add(time.Duration(i) * time.Hour)
		if ok, err := s.ClaimRun(ctx, id, slot, started); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
	}
	n, err := s.InterruptStaleRuns(ctx, id, base.Add(time.Hour), base.Add(3*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("interrupted %d, %v; want 1", n, err)
	}
	runs, err := s.Runs(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[RunStatus]int{}
	for _, r := range runs {
		got[r.Status]++
	}
	if got[RunInterrupted] != 1 || got[RunRunning] != 1 {
		t.Errorf("statuses %v", got)
	}
}
