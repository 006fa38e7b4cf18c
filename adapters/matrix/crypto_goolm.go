//go:build goolm

package matrix

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"maunium.net/go/mautrix/crypto/cryptohelper"
	"maunium.net/go/mautrix/event"
)

// setupCrypto starts the crypto machine (state in cfg.CryptoDB) and sets
// up cross-signing once, keeping its recovery key. Without cross-signing
// Element marks the bot's messages with a red shield, and clients that
// follow MSC4153 stop sending it room keys.
func (a *Adapter) setupCrypto(ctx context.Context, acct Login) error {
	if a.cfg.CryptoDB == "" {
		a.log.Warn("matrix: no crypto database configured; encrypted rooms cannot be read")
		return nil
	}
	// Created 0600 before SQLite opens it: its WAL and shared-memory files
	// then get the same mode.
	if a.cfg.PrivateDB != nil {
		if err := a.cfg.PrivateDB(a.cfg.CryptoDB); err != nil {
			return fmt.Errorf("matrix: the crypto store: %w", err)
		}
	}
	helper, err := cryptohelper.NewCryptoHelper(a.cli, []byte(acct.PickleKey), a.cfg.CryptoDB)
	if err != nil {
		return fmt.Errorf("matrix: open the crypto store %s: %w", a.cfg.CryptoDB, err)
	}
	locked := &lockedCrypto{cli: a.cli, helper: helper, onError: a.undecryptable}
	if err := locked.Init(ctx); err != nil {
		_ = helper.Close()
		return fmt.Errorf("matrix: start end-to-end encryption for device %s (the crypto state %s must belong to this device: "+
			"for another device, move that file aside; for a device that already has keys, log in as a new device): %w",
			a.cli.DeviceID, a.cfg.CryptoDB, err)
	}
	a.cli.Crypto = locked
	a.mu.Lock()
	a.encrypted = true
	a.closeCrypto = func() { _ = helper.Close() }
	a.mu.Unlock()

	mach := helper.Machine()
	has, verified, err := mach.GetOwnVerificationStatus(ctx)
	if err != nil {
		a.log.Warn("matrix: check cross-signing", "err", err)
		return nil
	}
	if has && !verified && acct.RecoveryKey != "" {
		// A new device of an account with cross-signing (the old login was
		// revoked): the kept recovery key signs it.
		if err := mach.VerifyWithRecoveryKey(ctx, acct.RecoveryKey); err != nil {
			a.log.Warn("matrix: sign the new device with the recovery key", "err", err)
		} else {
			a.log.Info("matrix: the new device is signed with the kept recovery key")
		}
		return nil
	}
	if has {
		return nil
	}
	if a.cfg.Password == "" {
		a.log.Warn("matrix: cross-signing is not set up, so clients may mark the bot's messages as unverified; start once with MATRIX_PASSWORD to set it up")
		return nil
	}
	recovery, _, err := mach.GenerateAndUploadCrossSigningKeysWithPassword(ctx, a.cfg.Password, "")
	if err == nil {
		err = mach.SignOwnDevice(ctx, mach.OwnIdentity())
	}
	if err != nil {
		a.log.Warn("matrix: set up cross-signing", "err", err)
		return nil
	}
	acct.RecoveryKey = recovery
	acct.UpdatedAt = a.cfg.Now()
	if err := a.cfg.State.SaveLogin(ctx, a.cfg.UserID, acct); err != nil {
		a.log.Error("matrix: keep the cross-signing recovery key", "err", err)
	}
	if a.cfg.RecoveryKeyFile != "" {
		if err := writePrivate(a.cfg.RecoveryKeyFile, recovery+"\n"); err != nil {
			a.log.Error("matrix: write the recovery key file", "file", a.cfg.RecoveryKeyFile, "err", err)
		} else {
			a.log.Info("matrix: cross-signing set up; the recovery key is kept", "file", a.cfg.RecoveryKeyFile)
			return nil
		}
	}
	a.log.Info("matrix: cross-signing set up; the recovery key is kept in the database")
	return nil
}

// undecryptable reports, once per session, an event that cannot be
// decrypted.
func (a *Adapter) undecryptable(evt *event.Event, err error) {
	key := evt.RoomID.String() + "|" + evt.ID.String()
	if c, ok := evt.Content.Parsed.(*event.EncryptedEventContent); ok {
		key = evt.RoomID.String() + "|" + string(c.SessionID)
	}
	a.reportUndecryptable(context.Background(), evt, key, fmt.Sprintf(
		"I could not decrypt a message from %s here (%v). Messages encrypted with the same keys will not be readable either; "+
			"sending it again, or verifying the bot's device, usually helps.", evt.Sender, err))
}

// writePrivate writes a secret to path, readable by the bot's user alone:
// 0600 whatever the umask or the mode an existing file had, and never
// through a symlink planted at path.
func writePrivate(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(content)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// EncryptionSupported reports whether this build can read encrypted rooms.
func EncryptionSupported() bool { return true }
