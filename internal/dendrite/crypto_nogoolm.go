//go:build !goolm

package dendrite

import (
	"testing"

	"maunium.net/go/mautrix"
)

// setupCrypto skips: mautrix's crypto without the goolm tag links libolm
// through cgo, which this repository does not use.
func setupCrypto(t testing.TB, _ *mautrix.Client, _ *User, _ bool, _ func(string, ...any)) {
	t.Skip("ClientOptions.Crypto needs -tags goolm (pure-Go Olm)")
}

// ResetCrossSigning skips: see setupCrypto.
func (c *Client) ResetCrossSigning() {
	c.t.Skip("ResetCrossSigning needs -tags goolm (pure-Go Olm)")
}
