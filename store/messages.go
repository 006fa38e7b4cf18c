package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ReceivedMessage is a chat message the bot has taken in: the dedupe record.
// Key is the message's identity on its platform — Slack "team/channel/ts", a
// Matrix event id, console "console/<thread>/<seq>" — not the delivery's, so
// one post delivered twice (or as both message and app_mention) is one record.
type ReceivedMessage struct {
	Platform, Key, ThreadKey, UserID, Text string
	ReceivedAt                             time.Time
}

// RecordMessage records m unless (m.Platform, m.Key) is already recorded.
// fresh reports whether this call recorded it; a duplicate is not an error,
// and of concurrent calls for one message exactly one sees fresh. It is one
// autocommit statement on the write connection, so it costs one WAL fsync.
func (s *Store) RecordMessage(ctx context.Context, m ReceivedMessage) (fresh bool, err error) {
	res, err := s.write.ExecContext(ctx, `
INSERT INTO received_messages (platform, key, thread_key, user_id, text, received_at, settled)
VALUES (?, ?, ?, ?, ?, ?, 0)
ON CONFLICT (platform, key) DO NOTHING`,
		m.Platform, m.Key, m.ThreadKey, m.UserID, m.Text, nullTime(m.ReceivedAt))
	if err != nil {
		return false, fmt.Errorf("record message %s/%s: %w", m.Platform, m.Key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("record message %s/%s: %w", m.Platform, m.Key, err)
	}
	return n == 1, nil
}

// SettleMessage records that the bot is done with a message it took in:
// a turn took it up, it was a command, or its thread was told why not. A
// message never settled is one a restart cut off before any of that
// (UnsettledMessages). Unknown keys are ignored.
func (s *Store) SettleMessage(ctx context.Context, platform, key string) error {
	if _, err := s.write.ExecContext(ctx,
		`UPDATE received_messages SET settled = 1 WHERE platform = ? AND key = ? AND settled = 0`, platform, key); err != nil {
		return fmt.Errorf("settle message %s/%s: %w", platform, key, err)
	}
	return nil
}

// UnsettledMessages returns the messages taken in and never settled, by
// thread, oldest first.
func (s *Store) UnsettledMessages(ctx context.Context) ([]ReceivedMessage, error) {
	ms, err := queryAll(ctx, s.read, func(r scanner) (ReceivedMessage, error) {
		var m ReceivedMessage
		var at sql.NullInt64
		err := r.Scan(&m.Platform, &m.Key, &m.ThreadKey, &m.UserID, &m.Text, &at)
		m.ReceivedAt = timeOf(at)
		return m, err
	}, `SELECT platform, key, thread_key, user_id, text, received_at FROM received_messages
WHERE settled = 0 ORDER BY thread_key, received_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("list unsettled messages: %w", err)
	}
	return ms, nil
}

// PruneMessages deletes the dedupe records received before cutoff, which no
// platform will redeliver any more, and reports how many it deleted.
func (s *Store) PruneMessages(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx,
		`DELETE FROM received_messages WHERE received_at < ?`, cutoff.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("prune messages before %s: %w", cutoff.UTC().Format(time.RFC3339), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune messages before %s: %w", cutoff.UTC().Format(time.RFC3339), err)
	}
	return n, nil
}
