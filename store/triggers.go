package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TriggerRun is one accepted event of a trigger and the run it started.
type TriggerRun struct {
	ID        int64
	Trigger   string
	Delivery  string
	Event     string
	StartedAt time.Time
	EndedAt   time.Time
	// Status is running, ok, failed or interrupted.
	Status    string
	ThreadKey string
	CostUSD   float64
	Error     string
}

// TriggerCount is how many of a trigger's requests came to one outcome
// (accepted, unauthorized, too_large, duplicate, ignored, unbound,
// rate_limited, …), and when the last did.
type TriggerCount struct {
	Trigger, Outcome string
	N                int64
	LastAt           time.Time
}

// TriggerDelivered stores a trigger's delivery id; false when it was
// stored before (a replay).
func (s *Store) TriggerDelivered(ctx context.Context, trigger, delivery string, at time.Time) (bool, error) {
	res, err := s.write.ExecContext(ctx, `INSERT OR IGNORE INTO trigger_deliveries (trigger, delivery, at) VALUES (?, ?, ?)`,
		trigger, delivery, nullTime(at))
	if err != nil {
		return false, fmt.Errorf("store delivery %s of trigger %s: %w", delivery, trigger, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store delivery %s of trigger %s: %w", delivery, trigger, err)
	}
	return n == 1, nil
}

// CountTrigger adds n requests of trigger to outcome's count, the last at
// at.
func (s *Store) CountTrigger(ctx context.Context, trigger, outcome string, n int64, at time.Time) error {
	_, err := s.write.ExecContext(ctx, `
INSERT INTO trigger_counts (trigger, outcome, n, last_at) VALUES (?, ?, ?, ?)
ON CONFLICT (trigger, outcome) DO UPDATE SET n = n + excluded.n, last_at = excluded.last_at`,
		trigger, outcome, n, nullTime(at))
	if err != nil {
		return fmt.Errorf("count %d %s requests of trigger %s: %w", n, outcome, trigger, err)
	}
	return nil
}

// TriggerCounts are every trigger's counts, by trigger and outcome.
func (s *Store) TriggerCounts(ctx context.Context) ([]TriggerCount, error) {
	cs, err := queryAll(ctx, s.read, func(r scanner) (TriggerCount, error) {
		var c TriggerCount
		var at sql.NullInt64
		err := r.Scan(&c.Trigger, &c.Outcome, &c.N, &at)
		c.LastAt = timeOf(at)
		return c, err
	}, `SELECT trigger, outcome, n, last_at FROM trigger_counts ORDER BY trigger, outcome`)
	if err != nil {
		return nil, fmt.Errorf("read the triggers' counts: %w", err)
	}
	return cs, nil
}

// StartTriggerRun stores r as running, if the trigger has started fewer
// than perHour runs since r.StartedAt less an hour (counted in the same
// statement, so two events at once cannot pass the rate together); ok is
// false when it has not, and nothing is stored.
func (s *Store) StartTriggerRun(ctx context.Context, r TriggerRun, perHour int) (id int64, ok bool, err error) {
	res, err := s.write.ExecContext(ctx, `
INSERT INTO trigger_runs (trigger, delivery, event, started_at, status)
SELECT ?, ?, ?, ?, 'running'
WHERE (SELECT count(*) FROM trigger_runs WHERE trigger = ? AND started_at > ?) < ?`,
		r.Trigger, r.Delivery, r.Event, nullTime(r.StartedAt), r.Trigger, nullTime(r.StartedAt.Add(-time.Hour)), perHour)
	if err != nil {
		return 0, false, fmt.Errorf("start a run of trigger %s: %w", r.Trigger, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, false, err
	}
	id, err = res.LastInsertId()
	if err != nil {
		return 0, false, fmt.Errorf("start a run of trigger %s: %w", r.Trigger, err)
	}
	return id, true, nil
}

// EndTriggerRun stores how run id ended.
func (s *Store) EndTriggerRun(ctx context.Context, id int64, r TriggerRun) error {
	_, err := s.write.ExecContext(ctx, `
UPDATE trigger_runs SET ended_at = ?, status = ?, thread_key = ?, cost_usd = ?, error = ? WHERE id = ?`,
		nullTime(r.EndedAt), r.Status, r.ThreadKey, r.CostUSD, r.Error, id)
	if err != nil {
		return fmt.Errorf("end trigger run %d: %w", id, err)
	}
	return nil
}

// TriggerRuns are a trigger's latest runs, newest first.
func (s *Store) TriggerRuns(ctx context.Context, trigger string, limit int) ([]TriggerRun, error) {
	rs, err := queryAll(ctx, s.read, func(r scanner) (TriggerRun, error) {
		var t TriggerRun
		var st, en sql.NullInt64
		err := r.Scan(&t.ID, &t.Trigger, &t.Delivery, &t.Event, &st, &en, &t.Status, &t.ThreadKey, &t.CostUSD, &t.Error)
		t.StartedAt, t.EndedAt = timeOf(st), timeOf(en)
		return t, err
	}, `
SELECT id, trigger, delivery, event, started_at, ended_at, status, thread_key, cost_usd, error
FROM trigger_runs WHERE trigger = ? ORDER BY id DESC LIMIT ?`, trigger, limit)
	if err != nil {
		return nil, fmt.Errorf("read the runs of trigger %s: %w", trigger, err)
	}
	return rs, nil
}

// SettleTriggerRuns marks the runs a stopped bot left running
// interrupted, at the start.
func (s *Store) SettleTriggerRuns(ctx context.Context, at time.Time) error {
	if _, err := s.write.ExecContext(ctx, `UPDATE trigger_runs SET status = 'interrupted', ended_at = ? WHERE status = 'running'`, nullTime(at)); err != nil {
		return fmt.Errorf("settle the trigger runs left running: %w", err)
	}
	return nil
}

// PruneTriggers deletes the delivery ids seen and the ended trigger runs
// from before cutoff, and returns how many rows went. A delivery id older
// than cutoff is forgotten: its replay is then held only by the
// signature, the filters and the rate (docs/SECURITY.md says so).
func (s *Store) PruneTriggers(ctx context.Context, cutoff time.Time) (int64, error) {
	at := nullTime(cutoff)
	res, err := s.write.ExecContext(ctx, `DELETE FROM trigger_deliveries WHERE at < ?`, at)
	if err != nil {
		return 0, fmt.Errorf("prune the trigger deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	res, err = s.write.ExecContext(ctx, `DELETE FROM trigger_runs WHERE status <> 'running' AND started_at < ?`, at)
	if err != nil {
		return n, fmt.Errorf("prune the trigger runs: %w", err)
	}
	m, _ := res.RowsAffected()
	return n + m, nil
}
