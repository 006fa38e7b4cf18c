package matrix

import (
	"context"
	"errors"
	"fmt"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Who a decision comes from, in an end-to-end encrypted room.
//
// The homeserver vouches for an event's sender only as far as the account:
// anyone holding a person's access token or password, and the server
// itself, can send as them. End-to-end encryption says more: an event
// decrypted with a session the sender's device shared, from a device its
// owner signed with their cross-signing identity (a session they verified),
// comes from that person's own device. So in an encrypted room a reaction,
// a vote, a typed reply or a command counts only when it arrived encrypted
// and mautrix (which decrypts it) reports the sending device
//
//   - verified: the bot's own, or one it marked verified;
//   - cross-signed, the signing identity verified by the bot's user-signing
//     key; or
//   - cross-signed by an identity that is the first the bot saw for that
//     user (trust on first use).
//
// Not: a device its owner never signed (a fresh login nobody verified), a
// signing identity that changed since first seen (a reset identity, which
// is what someone who took over the account would do), keys forwarded by
// another device or restored from a backup, an unknown device, a key
// mismatch, a blacklisted device, and anything sent in clear. Such an
// event is delivered with adapters.Event.Unverified saying why: it may be
// talk, but the bot lets it decide nothing and run no command.

// unverified says why evt may not decide in its room, "" when it may (or
// the room is not encrypted).
func (a *Adapter) unverified(ctx context.Context, evt *event.Event) string {
	enc, err := a.roomEncrypted(ctx, evt.RoomID)
	if err != nil {
		a.log.Warn("matrix: cannot tell whether a room is encrypted; its decisions are held to it", "room", evt.RoomID, "err", err)
	}
	if !enc && err == nil {
		return ""
	}
	m := evt.Mautrix
	switch {
	case !m.WasEncrypted:
		return "it was sent unencrypted in an end-to-end encrypted room"
	case m.ForwardedKeys:
		return "its keys were forwarded by another session, not shared by the sending one"
	}
	switch m.TrustState {
	case id.TrustStateVerified, id.TrustStateCrossSignedVerified, id.TrustStateCrossSignedTOFU:
		return ""
	case id.TrustStateUnset:
		return "it came from a session its sender has not verified"
	case id.TrustStateCrossSignedUntrusted:
		return "it came from a session signed by a cross-signing identity that changed since the bot first saw it"
	default:
		return fmt.Sprintf("the session it came from cannot be vouched for (%s)", m.TrustState)
	}
}

// roomEncrypted reports whether room has end-to-end encryption on. What
// the sync showed (m.room.encryption, see onEncryption) is kept; a room
// not seen yet is asked once. It cannot be turned off again, so a yes is
// final. An error means the bot could not tell, and is taken as a yes.
func (a *Adapter) roomEncrypted(ctx context.Context, room id.RoomID) (bool, error) {
	a.mu.Lock()
	enc, known := a.encRooms[room]
	a.mu.Unlock()
	if known {
		return enc, nil
	}
	var c event.EncryptionEventContent
	err := a.cli.StateEvent(ctx, room, event.StateEncryption, "", &c)
	switch {
	case err == nil:
		enc = c.Algorithm != ""
	case errors.Is(err, mautrix.MNotFound):
		enc = false
	default:
		return true, fmt.Errorf("read the room's encryption state: %w", err)
	}
	a.mu.Lock()
	if !a.encRooms[room] { // a sync may have said yes meanwhile
		a.encRooms[room] = enc
	}
	enc = a.encRooms[room]
	a.mu.Unlock()
	return enc, nil
}

// onEncryption notes a room's encryption turned on.
func (a *Adapter) onEncryption(_ context.Context, evt *event.Event) {
	a.mu.Lock()
	a.encRooms[evt.RoomID] = true
	a.mu.Unlock()
}
