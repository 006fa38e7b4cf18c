package store

import (
	"context"
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
INSERT INTO received_messages (platform, key, thread_key, user_id, text, received_at)
VALUES (?, ?, ?, ?, ?, ?)
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
