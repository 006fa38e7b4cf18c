package store

import (
	"context"
	"fmt"
	"time"
)

// SetRunThread records the thread the run of scheduleID at slot runs in,
// as soon as it begins there: a run the bot never finished is then settled
// from its thread's turns (InterruptRunningRuns). It wraps ErrNotFound if
// the slot was never claimed.
func (s *Store) SetRunThread(ctx context.Context, scheduleID int64, slot time.Time, threadKey string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE schedule_runs SET thread_key = ? WHERE schedule_id = ? AND slot = ?`,
		threadKey, scheduleID, slot.UnixMilli())
	return affectedOne(res, err, "record the thread of the run of schedule %d at %s", scheduleID, fmtSlot(slot))
}

// Errors of the runs InterruptRunningRuns settles: whether the store has
// the result the CLI reported (and so its cost). Without it the bot
// cannot know whether there was one: the run may have been cut off, or
// its turn's end refused by the storage until the bot stopped.
const (
	RunStoppedAfterResult  = "the bot stopped before this run's end was recorded, after Claude had reported its result"
	RunStoppedBeforeResult = "the bot stopped before this run's end was recorded, and before its result was: its cost is unknown"
)

// InterruptRunningRuns ends every run still RunRunning as RunInterrupted at
// now, whatever its schedule, and returns them as they are now. Called at
// start under the one-bot lock, before the scheduler runs: no process
// does any of them any more. A run whose thread is known (SetRunThread)
// takes the result, cost, tokens and turns of the first turn of that
// thread begun since the run started, if the CLI reported one (a turn
// closed by a restart or an exit reported none).
func (s *Store) InterruptRunningRuns(ctx context.Context, now time.Time) ([]ScheduleRun, error) {
	runs, err := queryAll(ctx, s.read, scanRun, `SELECT `+runColumns+` FROM schedule_runs WHERE status = ? ORDER BY id`, RunRunning)
	if err != nil {
		return nil, fmt.Errorf("list runs left running: %w", err)
	}
	for i := range runs {
		r := &runs[i]
		t, reported, err := s.runTurn(ctx, *r)
		if err != nil {
			return nil, err
		}
		r.Status, r.EndedAt, r.Error = RunInterrupted, now.UTC().Truncate(time.Millisecond), RunStoppedBeforeResult
		if reported {
			r.Error, r.CostUSD = RunStoppedAfterResult, t.CostUSD
			r.InputTokens, r.OutputTokens, r.NumTurns = t.InputTokens, t.OutputTokens, t.NumTurns
			if r.SessionID == "" {
				r.SessionID = t.SessionID
			}
		}
		// Only a run still running: one finished meanwhile keeps its end.
		res, err := s.write.ExecContext(ctx, `
UPDATE schedule_runs SET status = ?, ended_at = ?, error = ?, session_id = ?, cost_usd = ?,
	input_tokens = ?, output_tokens = ?, num_turns = ?
WHERE id = ? AND status = ?`,
			r.Status, nullTime(r.EndedAt), r.Error, r.SessionID, r.CostUSD,
			r.InputTokens, r.OutputTokens, r.NumTurns, r.ID, RunRunning)
		if err := affectedOne(res, err, "settle the run of schedule %d at %s left running", r.ScheduleID, fmtSlot(r.Slot)); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// runTurn is the first turn of r's thread begun since r started, and
// whether the CLI reported its result.
func (s *Store) runTurn(ctx context.Context, r ScheduleRun) (Turn, bool, error) {
	if r.ThreadKey == "" {
		return Turn{}, false, nil
	}
	t, ok, err := queryOne(ctx, s.read, scanTurn, `SELECT `+turnColumns+` FROM turns
WHERE thread_key = ? AND started_at >= ? ORDER BY id LIMIT 1`, r.ThreadKey, nullTime(r.StartedAt))
	if err != nil {
		return Turn{}, false, fmt.Errorf("the turn of the run of schedule %d at %s: %w", r.ScheduleID, fmtSlot(r.Slot), err)
	}
	reported := ok && !t.EndedAt.IsZero() && t.ResultSubtype != TurnInterrupted && t.ResultSubtype != TurnAborted
	return t, reported, nil
}
