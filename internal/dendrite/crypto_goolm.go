//go:build goolm

package dendrite

import (
	"context"
	"path/filepath"
	"testing"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/cryptohelper"
	"maunium.net/go/mautrix/event"
)

// setupCrypto makes cli an E2EE device with its keys in a fresh SQLite
// store. The device must be new to the server: a fresh store for a device
// that already uploaded keys fails Init. logf reports decryption
// failures, which happen in mautrix's goroutines.
func setupCrypto(t testing.TB, cli *mautrix.Client, logf func(string, ...any)) {
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
}
