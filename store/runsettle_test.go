package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// A run the bot never finished is settled at start from its thread's
// turns; read back from the SQLite file outside the Store.
func TestInterruptRunningRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state", "claudeops.db")
	s := openAt(t, path)
	id, err := s.AddSchedule(ctx, Schedule{Spec: "@hourly", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	now := base.Add(10 * time.Hour)
	type turn struct {
		after   time.Duration // begun this long after the run started (negative: before)
		subtype string        // "" while running
		cost    float64
	}
	cases := []struct {
		name      string
		thread    string
		turns     []turn
		finished  bool // the run ended before the bot stopped
		wantErr   string
		wantCost  float64
		wantState RunStatus
	}{
		{name: "its thread never known", wantErr: RunStoppedBeforeResult, wantState: RunInterrupted},
		{name: "cut mid-turn", thread: "t/mid", turns: []turn{{after: time.Second}}, wantErr: RunStoppedBeforeResult, wantState: RunInterrupted},
		{name: "closed as interrupted by the restart", thread: "t/closed", turns: []turn{{after: time.Second, subtype: TurnInterrupted}},
			wantErr: RunStoppedBeforeResult, wantState: RunInterrupted},
		{name: "its process exited", thread: "t/aborted", turns: []turn{{after: time.Second, subtype: TurnAborted}},
			wantErr: RunStoppedBeforeResult, wantState: RunInterrupted},
		{name: "result reported, run not recorded", thread: "t/result",
			turns:   []turn{{after: -time.Hour, subtype: "success", cost: 9}, {after: time.Second, subtype: "success", cost: 0.25}, {after: time.Minute, subtype: "success", cost: 7}},
			wantErr: RunStoppedAfterResult, wantCost: 0.25, wantState: RunInterrupted},
		{name: "finished before", thread: "t/done", finished: true, wantState: RunSucceeded},
	}
	for i, c := range cases {
		slot := base.Add(time.Duration(i) * time.Hour)
		started := slot.Add(time.Second)
		if ok, err := s.ClaimRun(ctx, id, slot, started); err != nil || !ok {
			t.Fatalf("%s: claim: %v %v", c.name, ok, err)
		}
		if c.thread != "" {
			if err := s.SetRunThread(ctx, id, slot, c.thread); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		for _, tu := range c.turns {
			tid, err := s.StartTurn(ctx, Turn{ThreadKey: c.thread, SessionID: "s", StartedAt: started.Add(tu.after)})
			if err != nil {
				t.Fatal(err)
			}
			if tu.subtype != "" {
				if err := s.FinishTurn(ctx, Turn{ID: tid, EndedAt: started.Add(tu.after + time.Second), ResultSubtype: tu.subtype, CostUSD: tu.cost, InputTokens: 3, OutputTokens: 4, NumTurns: 1}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if c.finished {
			if err := s.FinishRun(ctx, ScheduleRun{ScheduleID: id, Slot: slot, EndedAt: started.Add(time.Minute), Status: RunSucceeded, ThreadKey: c.thread}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.InterruptRunningRuns(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cases)-1 {
		t.Errorf("settled %d runs, want %d", len(got), len(cases)-1)
	}
	// Again: nothing is left running.
	if again, err := s.InterruptRunningRuns(ctx, now.Add(time.Hour)); err != nil || len(again) != 0 {
		t.Errorf("a second start settled %v, %v; want none", again, err)
	}
	db := rawDB(t, path, "mode=ro")
	for i, c := range cases {
		slot := base.Add(time.Duration(i) * time.Hour)
		var status, runErr string
		var cost float64
		var ended, in, out int64
		if err := db.QueryRowContext(ctx, `SELECT status, error, cost_usd, COALESCE(ended_at, 0), input_tokens, output_tokens
FROM schedule_runs WHERE schedule_id = ? AND slot = ?`, id, slot.UnixMilli()).Scan(&status, &runErr, &cost, &ended, &in, &out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if RunStatus(status) != c.wantState || runErr != c.wantErr || cost != c.wantCost {
			t.Errorf("%s: in the file: %s %q $%v; want %s %q $%v", c.name, status, runErr, cost, c.wantState, c.wantErr, c.wantCost)
		}
		if c.wantState == RunInterrupted && ended != now.UnixMilli() {
			t.Errorf("%s: ended_at %d, want %d", c.name, ended, now.UnixMilli())
		}
		if c.wantCost > 0 && (in != 3 || out != 4) {
			t.Errorf("%s: tokens %d/%d, want the turn's 3/4", c.name, in, out)
		}
	}
}
