package main

import (
	"context"

	matrixadapter "github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/store"
)

// matrixState keeps the Matrix adapter's login and sync position in the
// bot's database (chat_accounts, sync_cursors), so that the adapter need
// not import store.
type matrixState struct{ st *store.Store }

func (m matrixState) Login(ctx context.Context, user string) (matrixadapter.Login, bool, error) {
	a, ok, err := m.st.ChatAccount(ctx, matrixadapter.Platform, user)
	return matrixadapter.Login{
		Homeserver: a.Server, DeviceID: a.DeviceID, AccessToken: a.AccessToken,
		PickleKey: a.PickleKey, RecoveryKey: a.RecoveryKey, UpdatedAt: a.UpdatedAt,
	}, ok, err
}

func (m matrixState) SaveLogin(ctx context.Context, user string, l matrixadapter.Login) error {
	return m.st.SaveChatAccount(ctx, store.ChatAccount{
		Platform: matrixadapter.Platform, Account: user, Server: l.Homeserver, DeviceID: l.DeviceID,
		AccessToken: l.AccessToken, PickleKey: l.PickleKey, RecoveryKey: l.RecoveryKey, UpdatedAt: l.UpdatedAt,
	})
}

func (m matrixState) SyncPosition(ctx context.Context, user string) (matrixadapter.SyncPosition, error) {
	c, err := m.st.SyncCursor(ctx, matrixadapter.Platform, user)
	return matrixadapter.SyncPosition{NextBatch: c.NextBatch, FilterID: c.FilterID, SavedAt: c.At}, err
}

func (m matrixState) SaveSyncPosition(ctx context.Context, user string, p matrixadapter.SyncPosition) error {
	return m.st.SaveSyncCursor(ctx, matrixadapter.Platform, user,
		store.SyncCursor{NextBatch: p.NextBatch, FilterID: p.FilterID}, p.SavedAt)
}
