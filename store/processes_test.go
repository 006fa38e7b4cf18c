package store

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestSessionProcesses(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	a := SessionProcess{ID: 77, ThreadKey: "console/console/main", Name: "pid 4242", PGID: 4242, PID: 4242,
		StartTicks: 1<<62 + 5, KeeperPID: 4243, KeeperTicks: 1<<62 + 6, BootID: "b-1", StartedAt: tNs}
	b := SessionProcess{ThreadKey: "slack/T1/C1/1.5", Name: "sandbox pid 9", PGID: 9, PID: 9, StartTicks: 12, BootID: "b-1", StartedAt: t2}
	idA, err := s.RecordProcess(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	idB, err := s.RecordProcess(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if idA == 77 || idA <= 0 || idB <= idA {
		t.Errorf("ids %d, %d: want new increasing ids, the caller's ignored", idA, idB)
	}
	a.ID, a.StartedAt = idA, ms(tNs)
	b.ID = idB
	got, err := s.SessionProcesses(ctx)
	if err != nil || !reflect.DeepEqual(got, []SessionProcess{a, b}) {
		t.Fatalf("SessionProcesses = %+v, %v\nwant %+v", got, err, []SessionProcess{a, b})
	}
	for range 2 { // forgetting twice is no error
		if err := s.ForgetProcess(ctx, idA); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.SessionProcesses(ctx); err != nil || !reflect.DeepEqual(got, []SessionProcess{b}) {
		t.Errorf("after ForgetProcess: %+v, %v", got, err)
	}
}

// TestInterruptedTurns: at start, running turns close as interrupted,
// count in usage, and owe their thread one notice until it is given.
func TestInterruptedTurns(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	start := func(thread string, finished bool, cost float64) int64 {
		t.Helper()
		id, err := s.StartTurn(ctx, Turn{ThreadKey: thread, ChannelKey: "ch", Prompt: "p " + thread, StartedAt: t1})
		if err != nil {
			t.Fatal(err)
		}
		if finished {
			if err := s.FinishTurn(ctx, Turn{ID: id, EndedAt: t2, ResultSubtype: "success", CostUSD: cost, InputTokens: 5}); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	doneA := start("a", true, 0.5)
	runA := start("a", false, 0)
	runB := start("b", false, 0)
	start("c", true, 0.25)

	restart := t3
	n, err := s.CloseRunningTurns(ctx, restart)
	if err != nil || n != 2 {
		t.Fatalf("CloseRunningTurns = %d, %v; want 2", n, err)
	}
	for _, id := range []int64{runA, runB} {
		got, _, _ := s.GetTurn(ctx, id)
		if !got.EndedAt.Equal(restart) || got.ResultSubtype != TurnInterrupted || !got.IsError || got.CostUSD != 0 {
			t.Errorf("turn %d after close: %+v", id, got)
		}
	}
	if got, _, _ := s.GetTurn(ctx, doneA); got.ResultSubtype != "success" || !got.EndedAt.Equal(t2) {
		t.Errorf("a finished turn was changed: %+v", got)
	}
	// A second start finds nothing running.
	if n, err := s.CloseRunningTurns(ctx, restart.Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("second CloseRunningTurns = %d, %v; want 0", n, err)
	}

	owing := func() []int64 {
		t.Helper()
		ts, err := s.TurnsOwingNotice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, tu := range ts {
			ids = append(ids, tu.ID)
		}
		return ids
	}
	if got := owing(); !reflect.DeepEqual(got, []int64{runA, runB}) {
		t.Errorf("owing a notice: %v, want %v", got, []int64{runA, runB})
	}
	if err := s.NoticeGiven(ctx, "a", runA); err != nil {
		t.Fatal(err)
	}
	if got := owing(); !reflect.DeepEqual(got, []int64{runB}) {
		t.Errorf("owing after a's notice: %v, want [%d]", got, runB)
	}

	u, err := s.ThreadUsage(ctx, "a")
	if want := (Usage{Turns: 2, Interrupted: 1, CostUSD: 0.5, InputTokens: 5}); err != nil || u != want {
		t.Errorf("ThreadUsage(a) = %+v, %v; want %+v", u, err, want)
	}
	c, err := s.ChannelUsageSince(ctx, "ch", t1)
	if want := (Usage{Turns: 4, Interrupted: 2, CostUSD: 0.75, InputTokens: 10}); err != nil || c != want {
		t.Errorf("ChannelUsageSince = %+v, %v; want %+v", c, err, want)
	}
}

// TestInterruptedTurnFromOlderSchema: a turn a bot of the previous schema
// left running is closed by the next start after the migration.
func TestInterruptedTurnFromOlderSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "claudeops.db")
	old, err := open(ctx, path, migrations[:3])
	if err != nil {
		t.Fatal(err)
	}
	id, err := old.StartTurn(ctx, Turn{ThreadKey: "a", ChannelKey: "ch", StartedAt: t1})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path)
	if n, err := s.CloseRunningTurns(ctx, t2); err != nil || n != 1 {
		t.Fatalf("CloseRunningTurns = %d, %v; want 1", n, err)
	}
	if ts, err := s.TurnsOwingNotice(ctx); err != nil || len(ts) != 1 || ts[0].ID != id {
		t.Errorf("TurnsOwingNotice = %+v, %v", ts, err)
	}
}
