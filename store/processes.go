package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// SessionProcess is a process the bot started for a session and has not
// seen end yet: recorded when it starts, deleted when it ends, so that what
// is still recorded at the next start is what a previous run left running.
// Pid, PGID and StartTicks identify it across pid reuse, within the boot
// BootID names; Keeper* is the process that ends the group with the bot
// (0 when none).
type SessionProcess struct {
	ID          int64
	ThreadKey   string
	Name        string // how the runner names it in logs ("pid 4242")
	PGID, PID   int
	StartTicks  uint64
	KeeperPID   int
	KeeperTicks uint64
	BootID      string
	StartedAt   time.Time
}

const sessionProcessColumns = `id, thread_key, name, pgid, pid, start_ticks, keeper_pid, keeper_ticks, boot_id, started_at`

func scanSessionProcess(r scanner) (SessionProcess, error) {
	var p SessionProcess
	var started sql.NullInt64
	var ticks, kticks int64
	err := r.Scan(&p.ID, &p.ThreadKey, &p.Name, &p.PGID, &p.PID, &ticks, &p.KeeperPID, &kticks, &p.BootID, &started)
	p.StartTicks, p.KeeperTicks = uint64(ticks), uint64(kticks)
	p.StartedAt = timeOf(started)
	return p, err
}

// RecordProcess records p (its ID is ignored) and returns its ID.
func (s *Store) RecordProcess(ctx context.Context, p SessionProcess) (int64, error) {
	// SQLite integers are signed 64-bit; start times in clock ticks since
	// boot stay far below 2^63.
	res, err := s.write.ExecContext(ctx, `
INSERT INTO session_processes (thread_key, name, pgid, pid, start_ticks, keeper_pid, keeper_ticks, boot_id, started_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ThreadKey, p.Name, p.PGID, p.PID, int64(p.StartTicks), p.KeeperPID, int64(p.KeeperTicks), p.BootID, nullTime(p.StartedAt))
	if err != nil {
		return 0, fmt.Errorf("record process %s of thread %s: %w", p.Name, p.ThreadKey, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("record process %s of thread %s: %w", p.Name, p.ThreadKey, err)
	}
	return id, nil
}

// ForgetProcess deletes the process record id; one already gone is no
// error.
func (s *Store) ForgetProcess(ctx context.Context, id int64) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM session_processes WHERE id = ?`, id); err != nil {
		return fmt.Errorf("forget process record %d: %w", id, err)
	}
	return nil
}

// SessionProcesses returns every recorded process, oldest first.
func (s *Store) SessionProcesses(ctx context.Context) ([]SessionProcess, error) {
	ps, err := queryAll(ctx, s.read, scanSessionProcess,
		`SELECT `+sessionProcessColumns+` FROM session_processes ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list session processes: %w", err)
	}
	return ps, nil
}
