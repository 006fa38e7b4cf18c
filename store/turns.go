package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Turn is one prompt and Claude's answer to it: started when the prompt is
// written to the session, finished by its result.
type Turn struct {
	ID                                                              int64
	ThreadKey, ChannelKey, SessionID, Prompt                        string
	StartedAt, EndedAt                                              time.Time // EndedAt is zero while the turn runs
	ResultSubtype                                                   string
	IsError                                                         bool
	CostUSD                                                         float64
	InputTokens, OutputTokens, CacheReadTokens, CacheCreationTokens int64
	DurationMS                                                      int64
	NumTurns                                                        int
}

const turnColumns = `id, thread_key, channel_key, session_id, prompt, started_at, ended_at,
	result_subtype, is_error, cost_usd, input_tokens, output_tokens,
	cache_read_tokens, cache_creation_tokens, duration_ms, num_turns`

func scanTurn(r scanner) (Turn, error) {
	var t Turn
	var started, ended sql.NullInt64
	err := r.Scan(&t.ID, &t.ThreadKey, &t.ChannelKey, &t.SessionID, &t.Prompt, &started, &ended,
		&t.ResultSubtype, &t.IsError, &t.CostUSD, &t.InputTokens, &t.OutputTokens,
		&t.CacheReadTokens, &t.CacheCreationTokens, &t.DurationMS, &t.NumTurns)
	t.StartedAt, t.EndedAt = timeOf(started), timeOf(ended)
	return t, err
}

// StartTurn records a new turn from every field of t but ID, and returns the
// turn's ID.
func (s *Store) StartTurn(ctx context.Context, t Turn) (int64, error) {
	res, err := s.write.ExecContext(ctx, `
INSERT INTO turns (thread_key, channel_key, session_id, prompt, started_at, ended_at,
	result_subtype, is_error, cost_usd, input_tokens, output_tokens,
	cache_read_tokens, cache_creation_tokens, duration_ms, num_turns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ThreadKey, t.ChannelKey, t.SessionID, t.Prompt, nullTime(t.StartedAt), nullTime(t.EndedAt),
		t.ResultSubtype, t.IsError, t.CostUSD, t.InputTokens, t.OutputTokens,
		t.CacheReadTokens, t.CacheCreationTokens, t.DurationMS, t.NumTurns)
	if err != nil {
		return 0, fmt.Errorf("start turn in thread %s: %w", t.ThreadKey, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("start turn in thread %s: %w", t.ThreadKey, err)
	}
	return id, nil
}

// FinishTurn sets the EndedAt and result fields (ResultSubtype through
// NumTurns) of the turn with t.ID, and its SessionID when t.SessionID is not
// empty (a new session's id is known only once the turn has begun). It wraps
// ErrNotFound if there is no such turn.
func (s *Store) FinishTurn(ctx context.Context, t Turn) error {
	res, err := s.write.ExecContext(ctx, `
UPDATE turns SET
	session_id = CASE WHEN ? <> '' THEN ? ELSE session_id END,
	ended_at = ?, result_subtype = ?, is_error = ?, cost_usd = ?,
	input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_creation_tokens = ?,
	duration_ms = ?, num_turns = ?
WHERE id = ?`,
		t.SessionID, t.SessionID,
		nullTime(t.EndedAt), t.ResultSubtype, t.IsError, t.CostUSD,
		t.InputTokens, t.OutputTokens, t.CacheReadTokens, t.CacheCreationTokens,
		t.DurationMS, t.NumTurns, t.ID)
	if err != nil {
		return fmt.Errorf("finish turn %d: %w", t.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("finish turn %d: %w", t.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("finish turn %d: %w", t.ID, ErrNotFound)
	}
	return nil
}

// GetTurn returns the turn with id; ok is false if there is none.
func (s *Store) GetTurn(ctx context.Context, id int64) (t Turn, ok bool, err error) {
	t, ok, err = queryOne(ctx, s.read, scanTurn, `SELECT `+turnColumns+` FROM turns WHERE id = ?`, id)
	if err != nil {
		return Turn{}, false, fmt.Errorf("get turn %d: %w", id, err)
	}
	return t, ok, nil
}

// TurnInterrupted is the ResultSubtype of a turn a restart of the bot
// found without a recorded end (cut off, or its end's record refused by
// the storage until the bot stopped): its usage and cost are unknown (zero).
const TurnInterrupted = "interrupted"

// TurnAborted is the ResultSubtype of a turn whose process ended before
// its result: none was reported either.
const TurnAborted = "aborted"

// CloseRunningTurns ends every turn that has no end recorded as
// interrupted at at, each owing its thread a notice (TurnsOwingNotice).
// Called at start, before any turn runs: a turn still running then is one
// the previous run never finished. It returns how many it closed.
func (s *Store) CloseRunningTurns(ctx context.Context, at time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `
UPDATE turns SET ended_at = ?, result_subtype = ?, is_error = 1, notice_owed = 1
WHERE ended_at IS NULL`, nullTime(at), TurnInterrupted)
	if err != nil {
		return 0, fmt.Errorf("close running turns as interrupted: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("close running turns as interrupted: %w", err)
	}
	return n, nil
}

// TurnsOwingNotice returns the interrupted turns whose thread has not been
// told yet, by thread, oldest first.
func (s *Store) TurnsOwingNotice(ctx context.Context) ([]Turn, error) {
	ts, err := queryAll(ctx, s.read, scanTurn,
		`SELECT `+turnColumns+` FROM turns WHERE notice_owed = 1 ORDER BY thread_key, id`)
	if err != nil {
		return nil, fmt.Errorf("list interrupted turns owing a notice: %w", err)
	}
	return ts, nil
}

// NoticeGiven records that the thread was told about its interrupted
// turns up to and including turn upTo: they owe nothing any more.
func (s *Store) NoticeGiven(ctx context.Context, threadKey string, upTo int64) error {
	if _, err := s.write.ExecContext(ctx, `
UPDATE turns SET notice_owed = 0 WHERE thread_key = ? AND notice_owed = 1 AND id <= ?`, threadKey, upTo); err != nil {
		return fmt.Errorf("record the interrupted-turn notice of thread %s: %w", threadKey, err)
	}
	return nil
}

// Usage sums finished turns. Interrupted counts those of them a restart
// found without a recorded end (TurnInterrupted): they are in Turns, but their cost is not in
// CostUSD, as nobody reported it.
type Usage struct {
	Turns                     int
	Interrupted               int
	CostUSD                   float64
	InputTokens, OutputTokens int64
	DurationMS                int64
}

const usageSelect = `SELECT count(*), COALESCE(sum(result_subtype = '` + TurnInterrupted + `'), 0), COALESCE(sum(cost_usd), 0),
	COALESCE(sum(input_tokens), 0), COALESCE(sum(output_tokens), 0), COALESCE(sum(duration_ms), 0)
FROM turns `

func (s *Store) usage(ctx context.Context, where string, args ...any) (Usage, error) {
	var u Usage
	err := s.read.QueryRowContext(ctx, usageSelect+where, args...).
		Scan(&u.Turns, &u.Interrupted, &u.CostUSD, &u.InputTokens, &u.OutputTokens, &u.DurationMS)
	return u, err
}

// ThreadUsage sums the finished turns (EndedAt set) of a thread.
func (s *Store) ThreadUsage(ctx context.Context, threadKey string) (Usage, error) {
	u, err := s.usage(ctx, `WHERE thread_key = ? AND ended_at IS NOT NULL`, threadKey)
	if err != nil {
		return Usage{}, fmt.Errorf("thread usage %s: %w", threadKey, err)
	}
	return u, nil
}

// ChannelUsageSince sums the turns of a channel that finished at or after
// since: cost is counted when the result reports it.
func (s *Store) ChannelUsageSince(ctx context.Context, channelKey string, since time.Time) (Usage, error) {
	u, err := s.usage(ctx, `WHERE channel_key = ? AND ended_at >= ?`, channelKey, since.UnixMilli())
	if err != nil {
		return Usage{}, fmt.Errorf("channel usage %s since %s: %w", channelKey, since.UTC().Format(time.RFC3339), err)
	}
	return u, nil
}
