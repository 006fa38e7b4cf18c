//go:build !goolm

package matrix

import (
	"context"
)

// setupCrypto: built without the goolm tag there is no Olm, so encrypted
// rooms are reported as unreadable (see onEncrypted).
func (a *Adapter) setupCrypto(context.Context, Login) error {
	a.log.Warn("matrix: built without end-to-end encryption (build with -tags goolm); encrypted rooms cannot be read")
	return nil
}

// EncryptionSupported reports whether this build can read encrypted rooms.
func EncryptionSupported() bool { return false }
