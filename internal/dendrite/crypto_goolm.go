//go:build goolm

package dendrite

import (
	"context"
	"path/filepath"
	"testing"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/crypto/cryptohelper"
	"maunium.net/go/mautrix/event"
)

// setupCrypto makes cli an E2EE device with its keys in a fresh SQLite
// store. The device must be new to the server: a fresh store for a device
// that already uploaded keys fails Init. Unless unverified, the device is
// then signed by its user's cross-signing identity, as a session verified
// in Element is: the account's first crypto device creates that identity
// (its recovery key kept in u), a later one signs itself with the recovery
// key. logf reports decryption failures, which happen in mautrix's
// goroutines.
func setupCrypto(t testing.TB, cli *mautrix.Client, u *User, unverified bool, logf func(string, ...any)) {
	t.Helper()
	helper, err := cryptohelper.NewCryptoHelper(cli, []byte("claudeops test pickle key"), filepath.Join(t.TempDir(), "crypto.db"))
	if err != nil {
		t.Fatalf("dendrite: crypto helper for %s: %v", cli.UserID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := helper.Init(ctx); err != nil {
		t.Fatalf("dendrite: crypto init for %s: %v", cli.UserID, err)
	}
	helper.DecryptErrorCallback = func(evt *event.Event, err error) {
		logf("dendrite: %s cannot decrypt %s: %v", cli.UserID, evt.ID, err)
	}
	cli.Crypto = helper
	t.Cleanup(func() { _ = helper.Close() })
	if !unverified {
		crossSign(t, ctx, helper.Machine(), u)
	}
}

// crossSign signs the machine's own device with u's cross-signing
// identity, creating the identity first when the account has none.
func crossSign(t testing.TB, ctx context.Context, mach *crypto.OlmMachine, u *User) {
	t.Helper()
	has, _, err := mach.GetOwnVerificationStatus(ctx)
	if err != nil {
		t.Fatalf("dendrite: cross-signing status of %s: %v", u.ID, err)
	}
	if has {
		if u.RecoveryKey == "" {
			t.Fatalf("dendrite: %s has a cross-signing identity but no recovery key to sign device %s with", u.ID, u.DeviceID)
		}
		if err := mach.VerifyWithRecoveryKey(ctx, u.RecoveryKey); err != nil {
			t.Fatalf("dendrite: sign device %s of %s with the recovery key: %v", u.DeviceID, u.ID, err)
		}
		return
	}
	recovery, _, err := mach.GenerateAndUploadCrossSigningKeysWithPassword(ctx, u.Password, "")
	if err == nil {
		err = mach.SignOwnDevice(ctx, mach.OwnIdentity())
	}
	if err != nil {
		t.Fatalf("dendrite: set up cross-signing for %s: %v", u.ID, err)
	}
	u.RecoveryKey = recovery
}

// ResetCrossSigning gives the account a new cross-signing identity and
// signs this session with it: what a person who lost their recovery key
// does, and what someone who took the account over would do. Its other
// sessions are then signed by an identity that is no longer the account's.
func (c *Client) ResetCrossSigning() {
	c.t.Helper()
	helper, ok := c.Matrix.Crypto.(*cryptohelper.CryptoHelper)
	if !ok {
		c.t.Fatalf("dendrite: %s has no crypto to reset", c.User.ID)
	}
	mach := helper.Machine()
	ctx, cancel := c.ctx()
	defer cancel()
	recovery, _, err := mach.GenerateAndUploadCrossSigningKeysWithPassword(ctx, c.User.Password, "")
	if err == nil {
		err = mach.SignOwnDevice(ctx, mach.OwnIdentity())
	}
	c.check(err, "resetting cross-signing")
	c.User.RecoveryKey = recovery
}
