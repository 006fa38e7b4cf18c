package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// The reads a chat adapter's catch-up needs (what was posted while the bot
// was away): the threads active lately, and the messages already taken in
// there. Where catch-up has read up to is kept as sync cursors
// (SaveSyncCursor), one per conversation.

// ThreadsActiveSince returns the threads of platform last active at or after
// since, the most recently active first.
func (s *Store) ThreadsActiveSince(ctx context.Context, platform string, since time.Time) ([]Thread, error) {
	ts, err := queryAll(ctx, s.read, scanThread,
		`SELECT `+threadColumns+` FROM threads WHERE last_activity >= ? AND platform = ?
ORDER BY last_activity DESC, key`, since.UnixMilli(), platform)
	if err != nil {
		return nil, fmt.Errorf("list %s threads active since %s: %w", platform, since.UTC().Format(time.RFC3339), err)
	}
	return ts, nil
}

func scanReceived(r scanner) (ReceivedMessage, error) {
	var m ReceivedMessage
	var at sql.NullInt64
	err := r.Scan(&m.Platform, &m.Key, &m.ThreadKey, &m.UserID, &m.Text, &at)
	m.ReceivedAt = timeOf(at)
	return m, err
}

// ReceivedBetween returns the messages of platform recorded with a key
// after from and before to (byte order), in key order: a platform whose
// keys start with the conversation and sort by time (Slack's
// team/channel/ts) gets a conversation's messages since a time. It reads
// the primary key's range, not the table.
func (s *Store) ReceivedBetween(ctx context.Context, platform, from, to string) ([]ReceivedMessage, error) {
	ms, err := queryAll(ctx, s.read, scanReceived, `
SELECT platform, key, thread_key, user_id, text, received_at FROM received_messages
WHERE platform = ? AND key > ? AND key < ? ORDER BY key`, platform, from, to)
	if err != nil {
		return nil, fmt.Errorf("list %s messages between %q and %q: %w", platform, from, to, err)
	}
	return ms, nil
}

// DeleteSyncCursorsBefore deletes the cursors of platform whose account
// starts with prefix and that were saved before cutoff; it reports how
// many.
func (s *Store) DeleteSyncCursorsBefore(ctx context.Context, platform, prefix string, cutoff time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `
DELETE FROM sync_cursors WHERE platform = ? AND substr(account, 1, length(?)) = ? AND updated_at < ?`,
		platform, prefix, prefix, cutoff.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("delete %s cursors %q… before %s: %w", platform, prefix, cutoff.UTC().Format(time.RFC3339), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete %s cursors %q…: %w", platform, prefix, err)
	}
	return n, nil
}
