package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ChatAccount is what a chat adapter keeps of its login between runs: for
// Matrix the device its access token belongs to (the crypto state is bound
// to that device), the key that encrypts that state, and the recovery key
// of its cross-signing keys.
type ChatAccount struct {
	Platform, Account string
	Server            string
	DeviceID          string
	AccessToken       string
	PickleKey         string
	RecoveryKey       string
	UpdatedAt         time.Time
}

// ChatAccount loads an account's record; ok is false when there is none.
func (s *Store) ChatAccount(ctx context.Context, platform, account string) (a ChatAccount, ok bool, err error) {
	var at sql.NullInt64
	err = s.read.QueryRowContext(ctx, `
SELECT platform, account, server, device_id, access_token, pickle_key, recovery_key, updated_at
FROM chat_accounts WHERE platform = ? AND account = ?`, platform, account).
		Scan(&a.Platform, &a.Account, &a.Server, &a.DeviceID, &a.AccessToken, &a.PickleKey, &a.RecoveryKey, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return ChatAccount{}, false, nil
	}
	if err != nil {
		return ChatAccount{}, false, fmt.Errorf("load %s account %s: %w", platform, account, err)
	}
	a.UpdatedAt = timeOf(at)
	return a, true, nil
}

// SaveChatAccount creates or replaces an account's record.
func (s *Store) SaveChatAccount(ctx context.Context, a ChatAccount) error {
	_, err := s.write.ExecContext(ctx, `
INSERT INTO chat_accounts (platform, account, server, device_id, access_token, pickle_key, recovery_key, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (platform, account) DO UPDATE SET server = excluded.server, device_id = excluded.device_id,
	access_token = excluded.access_token, pickle_key = excluded.pickle_key,
	recovery_key = excluded.recovery_key, updated_at = excluded.updated_at`,
		a.Platform, a.Account, a.Server, a.DeviceID, a.AccessToken, a.PickleKey, a.RecoveryKey, nullTime(a.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save %s account %s: %w", a.Platform, a.Account, err)
	}
	return nil
}

// SyncCursor is where an account's event stream stands (Matrix next_batch)
// and the server-side filter it syncs with.
type SyncCursor struct {
	NextBatch, FilterID string
	// At is when the cursor was saved (read back; SaveSyncCursor takes it
	// as an argument).
	At time.Time
}

// SyncCursor loads an account's cursor; the zero cursor when there is none.
func (s *Store) SyncCursor(ctx context.Context, platform, account string) (SyncCursor, error) {
	var c SyncCursor
	var at sql.NullInt64
	err := s.read.QueryRowContext(ctx, `
SELECT next_batch, filter_id, updated_at FROM sync_cursors WHERE platform = ? AND account = ?`, platform, account).
		Scan(&c.NextBatch, &c.FilterID, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return SyncCursor{}, nil
	}
	if err != nil {
		return SyncCursor{}, fmt.Errorf("load %s sync cursor of %s: %w", platform, account, err)
	}
	c.At = timeOf(at)
	return c, nil
}

// SaveSyncCursor stores an account's cursor.
func (s *Store) SaveSyncCursor(ctx context.Context, platform, account string, c SyncCursor, at time.Time) error {
	_, err := s.write.ExecContext(ctx, `
INSERT INTO sync_cursors (platform, account, next_batch, filter_id, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (platform, account) DO UPDATE SET next_batch = excluded.next_batch,
	filter_id = excluded.filter_id, updated_at = excluded.updated_at`,
		platform, account, c.NextBatch, c.FilterID, nullTime(at))
	if err != nil {
		return fmt.Errorf("save %s sync cursor of %s: %w", platform, account, err)
	}
	return nil
}
