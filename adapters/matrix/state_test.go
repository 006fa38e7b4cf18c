package matrix

import (
	"context"

	"github.com/claudeops/claudeops/store"
)

// StoreState is State on the bot's database, as cmd/claudeops keeps it
// (matrixState there): the tests' adapters use it so that what they save
// is what a real run would read back. Exported for the external tests.
type StoreState struct{ *store.Store }

func (s StoreState) Login(ctx context.Context, user string) (Login, bool, error) {
	a, ok, err := s.ChatAccount(ctx, Platform, user)
	return Login{Homeserver: a.Server, DeviceID: a.DeviceID, AccessToken: a.AccessToken,
		PickleKey: a.PickleKey, RecoveryKey: a.RecoveryKey, UpdatedAt: a.UpdatedAt}, ok, err
}

func (s StoreState) SaveLogin(ctx context.Context, user string, l Login) error {
	return s.SaveChatAccount(ctx, store.ChatAccount{Platform: Platform, Account: user, Server: l.Homeserver,
		DeviceID: l.DeviceID, AccessToken: l.AccessToken, PickleKey: l.PickleKey, RecoveryKey: l.RecoveryKey, UpdatedAt: l.UpdatedAt})
}

func (s StoreState) SyncPosition(ctx context.Context, user string) (SyncPosition, error) {
	c, err := s.SyncCursor(ctx, Platform, user)
	return SyncPosition{NextBatch: c.NextBatch, FilterID: c.FilterID, SavedAt: c.At}, err
}

func (s StoreState) SaveSyncPosition(ctx context.Context, user string, p SyncPosition) error {
	return s.SaveSyncCursor(ctx, Platform, user, store.SyncCursor{NextBatch: p.NextBatch, FilterID: p.FilterID}, p.SavedAt)
}
