package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Schedule is a recurring prompt. The store keeps its fields as given;
// defaults (timeout, overlap, catch-up, approval policy) are the scheduler's.
type Schedule struct {
	ID             int64
	Spec           string // cron spec as the user wrote it, e.g. "CRON_TZ=Europe/Berlin 30 2 * * *"
	TimeZone       string // IANA name applied when Spec has no CRON_TZ= prefix; "" is the scheduler's default
	Prompt         string
	Platform       string // target platform, e.g. "slack"
	Channel        string // target channel key on that platform
	Cwd, Model     string
	CreatedBy      string
	ApprovalPolicy string        // unattended approvals: "deny" or "park"
	Timeout        time.Duration // stored in ms
	Overlap        string        // "skip" or "queue"
	CatchUp        time.Duration // catch-up window, stored in ms
	Paused         bool
	// Push: a run that changed files commits and pushes its branch.
	Push bool
	// PR: a run that pushed opens a pull request from its branch, or
	// updates the one the schedule's earlier run opened while that is
	// still open (one open pull request per schedule). PR implies Push.
	PR        bool
	CreatedAt time.Time
	UpdatedAt time.Time // last UpdateSchedule or SetPaused
}

// RunStatus is the state of one schedule run.
type RunStatus string

// Run statuses. RunRunning is the only non-final one.
const (
	RunRunning     RunStatus = "running"
	RunSucceeded   RunStatus = "succeeded"
	RunFailed      RunStatus = "failed"
	RunTimedOut    RunStatus = "timed_out"
	RunSkipped     RunStatus = "skipped"
	RunMissed      RunStatus = "missed"
	RunInterrupted RunStatus = "interrupted"
)

// ScheduleRun is one scheduled time (slot) of a schedule and what became of
// it. A row with status RunMissed may stand for several missed slots: Missed
// counts them and Slot is the latest.
type ScheduleRun struct {
	ID                        int64
	ScheduleID                int64
	Slot                      time.Time // the scheduled time; unique per schedule
	StartedAt                 time.Time
	EndedAt                   time.Time // zero while running
	Status                    RunStatus
	Missed                    int // for RunMissed rows: how many slots this row stands for
	SessionID                 string
	ThreadKey                 string // the thread the run posted into
	Result                    string
	Error                     string
	CostUSD                   float64
	InputTokens, OutputTokens int64
	NumTurns                  int
	// Branch and Commit: what the run left in its repository ("" when
	// its channel has none, or nothing was committed).
	Branch, Commit string
	// PR is the pull request the run opened or updated (its page; "" for
	// none).
	PR string
}

const scheduleColumns = `id, spec, time_zone, prompt, platform, channel, cwd, model, created_by,
	approval_policy, timeout_ms, overlap, catch_up_ms, paused, created_at, updated_at, push, pr`

func scanSchedule(r scanner) (Schedule, error) {
	var s Schedule
	var timeout, catchUp int64
	var created, updated sql.NullInt64
	err := r.Scan(&s.ID, &s.Spec, &s.TimeZone, &s.Prompt, &s.Platform, &s.Channel, &s.Cwd, &s.Model,
		&s.CreatedBy, &s.ApprovalPolicy, &timeout, &s.Overlap, &catchUp, &s.Paused, &created, &updated, &s.Push, &s.PR)
	s.Timeout = time.Duration(timeout) * time.Millisecond
	s.CatchUp = time.Duration(catchUp) * time.Millisecond
	s.CreatedAt, s.UpdatedAt = timeOf(created), timeOf(updated)
	return s, err
}

const runColumns = `id, schedule_id, slot, started_at, ended_at, status, missed, session_id, thread_key,
	result, error, cost_usd, input_tokens, output_tokens, num_turns, branch, commit_id, pr_url`

func scanRun(r scanner) (ScheduleRun, error) {
	var run ScheduleRun
	var slot int64
	var started, ended sql.NullInt64
	err := r.Scan(&run.ID, &run.ScheduleID, &slot, &started, &ended, &run.Status, &run.Missed,
		&run.SessionID, &run.ThreadKey, &run.Result, &run.Error, &run.CostUSD,
		&run.InputTokens, &run.OutputTokens, &run.NumTurns, &run.Branch, &run.Commit, &run.PR)
	run.Slot = time.UnixMilli(slot).UTC()
	run.StartedAt, run.EndedAt = timeOf(started), timeOf(ended)
	return run, err
}

// AddSchedule stores s (its ID is ignored) and returns the new schedule's ID.
// IDs are never reused, so a stale "schedule rm <id>" cannot remove a newer
// schedule.
func (s *Store) AddSchedule(ctx context.Context, sc Schedule) (int64, error) {
	res, err := s.write.ExecContext(ctx, `
INSERT INTO schedules (spec, time_zone, prompt, platform, channel, cwd, model, created_by,
	approval_policy, timeout_ms, overlap, catch_up_ms, paused, created_at, updated_at, push, pr)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sc.Spec, sc.TimeZone, sc.Prompt, sc.Platform, sc.Channel, sc.Cwd, sc.Model, sc.CreatedBy,
		sc.ApprovalPolicy, sc.Timeout.Milliseconds(), sc.Overlap, sc.CatchUp.Milliseconds(), sc.Paused,
		nullTime(sc.CreatedAt), nullTime(sc.UpdatedAt), sc.Push, sc.PR)
	if err != nil {
		return 0, fmt.Errorf("add schedule %q: %w", sc.Spec, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("add schedule %q: %w", sc.Spec, err)
	}
	return id, nil
}

// GetSchedule returns the schedule with id; ok is false if there is none.
func (s *Store) GetSchedule(ctx context.Context, id int64) (sc Schedule, ok bool, err error) {
	sc, ok, err = queryOne(ctx, s.read, scanSchedule, `SELECT `+scheduleColumns+` FROM schedules WHERE id = ?`, id)
	if err != nil {
		return Schedule{}, false, fmt.Errorf("get schedule %d: %w", id, err)
	}
	return sc, ok, nil
}

// ListSchedules returns every schedule, by ID.
func (s *Store) ListSchedules(ctx context.Context) ([]Schedule, error) {
	scs, err := queryAll(ctx, s.read, scanSchedule, `SELECT `+scheduleColumns+` FROM schedules ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return scs, nil
}

// UpdateSchedule replaces every field of the schedule with sc.ID except
// CreatedAt. It wraps ErrNotFound if there is no such schedule.
func (s *Store) UpdateSchedule(ctx context.Context, sc Schedule) error {
	res, err := s.write.ExecContext(ctx, `
UPDATE schedules SET spec = ?, time_zone = ?, prompt = ?, platform = ?, channel = ?, cwd = ?,
	model = ?, created_by = ?, approval_policy = ?, timeout_ms = ?, overlap = ?, catch_up_ms = ?,
	paused = ?, updated_at = ?, push = ?, pr = ?
WHERE id = ?`,
		sc.Spec, sc.TimeZone, sc.Prompt, sc.Platform, sc.Channel, sc.Cwd,
		sc.Model, sc.CreatedBy, sc.ApprovalPolicy, sc.Timeout.Milliseconds(), sc.Overlap, sc.CatchUp.Milliseconds(),
		sc.Paused, nullTime(sc.UpdatedAt), sc.Push, sc.PR, sc.ID)
	return affectedOne(res, err, "update schedule %d", sc.ID)
}

// SetPaused pauses or resumes the schedule with id and sets its UpdatedAt to
// now. It wraps ErrNotFound if there is no such schedule.
func (s *Store) SetPaused(ctx context.Context, id int64, paused bool, now time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE schedules SET paused = ?, updated_at = ? WHERE id = ?`,
		paused, nullTime(now), id)
	return affectedOne(res, err, "set schedule %d paused", id)
}

// DeleteSchedule deletes the schedule with id, and its runs, and reports
// whether there was one.
func (s *Store) DeleteSchedule(ctx context.Context, id int64) (bool, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM schedules WHERE id = ?`, id)
	if err != nil {
		return false, fmt.Errorf("delete schedule %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete schedule %d: %w", id, err)
	}
	return n == 1, nil
}

// ClaimRun records that this process starts the run of scheduleID at slot: a
// RunRunning row started at now. It reports false, and changes nothing, when
// that (schedule, slot) already has a row, in this process or any other on
// the same database: each slot is claimed at most once. Claiming a slot of a
// schedule that does not exist is an error.
func (s *Store) ClaimRun(ctx context.Context, scheduleID int64, slot, now time.Time) (bool, error) {
	return s.insertRun(ctx, ScheduleRun{ScheduleID: scheduleID, Slot: slot, StartedAt: now, Status: RunRunning})
}

// RecordRun stores a finished run (its ID is ignored), typically RunSkipped
// or RunMissed, unless its (schedule, slot) already has a row; it reports
// whether it stored it.
func (s *Store) RecordRun(ctx context.Context, r ScheduleRun) (bool, error) {
	return s.insertRun(ctx, r)
}

func (s *Store) insertRun(ctx context.Context, r ScheduleRun) (bool, error) {
	res, err := s.write.ExecContext(ctx, `
INSERT INTO schedule_runs (schedule_id, slot, started_at, ended_at, status, missed, session_id, thread_key,
	result, error, cost_usd, input_tokens, output_tokens, num_turns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (schedule_id, slot) DO NOTHING`,
		r.ScheduleID, r.Slot.UnixMilli(), nullTime(r.StartedAt), nullTime(r.EndedAt), r.Status, r.Missed,
		r.SessionID, r.ThreadKey, r.Result, r.Error, r.CostUSD, r.InputTokens, r.OutputTokens, r.NumTurns)
	if err != nil {
		return false, fmt.Errorf("record run of schedule %d at %s (%s): %w", r.ScheduleID, fmtSlot(r.Slot), r.Status, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("record run of schedule %d at %s (%s): %w", r.ScheduleID, fmtSlot(r.Slot), r.Status, err)
	}
	return n == 1, nil
}

// FinishRun sets the outcome of the run of r.ScheduleID at r.Slot: every
// field but ID, ScheduleID, Slot and Missed, except that a zero StartedAt
// keeps the claimed start time. It wraps ErrNotFound if the slot was never
// claimed (or its schedule was deleted meanwhile).
func (s *Store) FinishRun(ctx context.Context, r ScheduleRun) error {
	res, err := s.write.ExecContext(ctx, `
UPDATE schedule_runs SET started_at = COALESCE(?, started_at), ended_at = ?, status = ?,
	session_id = ?, thread_key = ?, result = ?, error = ?, cost_usd = ?,
	input_tokens = ?, output_tokens = ?, num_turns = ?, branch = ?, commit_id = ?, pr_url = ?
WHERE schedule_id = ? AND slot = ?`,
		nullTime(r.StartedAt), nullTime(r.EndedAt), r.Status,
		r.SessionID, r.ThreadKey, r.Result, r.Error, r.CostUSD,
		r.InputTokens, r.OutputTokens, r.NumTurns, r.Branch, r.Commit, r.PR,
		r.ScheduleID, r.Slot.UnixMilli())
	return affectedOne(res, err, "finish run of schedule %d at %s", r.ScheduleID, fmtSlot(r.Slot))
}

// InterruptStaleRuns marks runs of scheduleID still "running" but started
// before startedBefore as interrupted: their process died without saying
// so (a crash). Callers pick startedBefore past any live run's timeout, so
// a run another process is still doing is never touched.
func (s *Store) InterruptStaleRuns(ctx context.Context, scheduleID int64, startedBefore, now time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `
UPDATE schedule_runs SET status = ?, ended_at = ?, error = ?
WHERE schedule_id = ? AND status = ? AND started_at < ?`,
		RunInterrupted, now.UnixMilli(), "the bot stopped during this run", scheduleID, RunRunning, startedBefore.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("interrupt stale runs of schedule %d: %w", scheduleID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("interrupt stale runs of schedule %d: %w", scheduleID, err)
	}
	return n, nil
}

// Runs returns up to limit runs of scheduleID (all if limit <= 0), latest
// slot first.
func (s *Store) Runs(ctx context.Context, scheduleID int64, limit int) ([]ScheduleRun, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rs, err := queryAll(ctx, s.read, scanRun,
		`SELECT `+runColumns+` FROM schedule_runs WHERE schedule_id = ? ORDER BY slot DESC LIMIT ?`, scheduleID, limit)
	if err != nil {
		return nil, fmt.Errorf("runs of schedule %d: %w", scheduleID, err)
	}
	return rs, nil
}

// PruneRuns deletes the runs of scheduleID but the keep with the latest
// slots (none if keep <= 0), never a running one, and returns how many it
// deleted.
func (s *Store) PruneRuns(ctx context.Context, scheduleID int64, keep int) (int64, error) {
	res, err := s.write.ExecContext(ctx, `
DELETE FROM schedule_runs
WHERE schedule_id = ? AND status <> ? AND id NOT IN (
	SELECT id FROM schedule_runs WHERE schedule_id = ? ORDER BY slot DESC LIMIT ?)`,
		scheduleID, RunRunning, scheduleID, max(keep, 0))
	if err != nil {
		return 0, fmt.Errorf("prune runs of schedule %d: %w", scheduleID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune runs of schedule %d: %w", scheduleID, err)
	}
	return n, nil
}

// LastSlot returns the latest slot recorded for scheduleID, whatever its
// status; ok is false if it has none.
func (s *Store) LastSlot(ctx context.Context, scheduleID int64) (slot time.Time, ok bool, err error) {
	var n sql.NullInt64
	if err := s.read.QueryRowContext(ctx, `SELECT max(slot) FROM schedule_runs WHERE schedule_id = ?`, scheduleID).Scan(&n); err != nil {
		return time.Time{}, false, fmt.Errorf("last slot of schedule %d: %w", scheduleID, err)
	}
	if !n.Valid {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(n.Int64).UTC(), true, nil
}

// affectedOne turns an update's result into an error wrapping ErrNotFound
// when no row matched.
func affectedOne(res sql.Result, err error, format string, args ...any) error {
	if err == nil {
		var n int64
		n, err = res.RowsAffected()
		if err == nil && n == 0 {
			err = ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	return nil
}

func fmtSlot(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
