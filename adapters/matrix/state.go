package matrix

import (
	"context"
	"time"
)

// Login is the Matrix login the adapter keeps between runs. The crypto
// state (Config.CryptoDB) belongs to DeviceID and is encrypted with
// PickleKey: losing either makes that state unreadable.
type Login struct {
	Homeserver  string // the server the token was issued by
	DeviceID    string
	AccessToken string
	PickleKey   string // hex, 32 random bytes
	RecoveryKey string // of the cross-signing keys; empty until set up
	UpdatedAt   time.Time
}

// SyncPosition is where the account's sync stands: the next_batch token a
// restart syncs from and the server-side filter it syncs with.
type SyncPosition struct {
	NextBatch, FilterID string
	SavedAt             time.Time // when it was saved
}

// State is what the adapter keeps between runs, per Matrix user id
// (cmd/claudeops keeps it in the bot's database). Each method returns an
// error only when the storage failed; the adapter stops what it was doing
// on one (Connect fails; a sync stops rather than lose its position).
//
//   - Login returns the user's saved login; ok is false when there is none.
//   - SaveLogin creates or replaces it, durably before it returns: a token
//     or device lost after a password login leaves the crypto state to a
//     device the bot cannot log in as again.
//   - SyncPosition returns the saved position; the zero value when none
//     (the first sync is then an initial one).
//   - SaveSyncPosition replaces it, durably before it returns. The adapter
//     saves a next_batch only after every event before it was delivered
//     (and the bot recorded it), so a restart syncs nothing twice that was
//     handled and skips nothing that was not.
//
// Which events were already processed is not State's: the bot records each
// event id it is given and drops redeliveries itself.
type State interface {
	Login(ctx context.Context, user string) (l Login, ok bool, err error)
	SaveLogin(ctx context.Context, user string, l Login) error
	SyncPosition(ctx context.Context, user string) (SyncPosition, error)
	SaveSyncPosition(ctx context.Context, user string, p SyncPosition) error
}
