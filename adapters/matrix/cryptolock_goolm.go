//go:build goolm

package matrix

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// lockedCrypto is the client's Crypto: mautrix's crypto helper with one
// mutex held around every call into its machine.
//
// Why: mautrix (v0.31.0, still in v0.32.0) does not guard the machine's
// cache of its own cross-signing keys. Sending a message encrypts it and
// may fetch the bot's own keys (SendMessageEvent → Encrypt →
// ShareGroupSession → FetchKeys → storeCrossSigningKeys resets the cache)
// while the sync goroutine decrypts an incoming event and reads or fills
// the cache (HandleEncrypted → DecryptMegolmEvent → ResolveTrustContext →
// IsUserTrusted → GetOwnCrossSigningPublicKeys): a data race whenever the
// bot answers while a message arrives. So the lock is held by Encrypt, by
// the decryption of one event, and by the sync handlers the helper
// registers (to-device events, device lists, members: they fetch keys too).
//
// It is never held while a decrypted event is dispatched, nor while a
// decryption error is reported: the helper's handlers take it, and the
// adapter's may send, which encrypts. Nothing called under it calls back:
// the machine sends its to-device messages itself, never through the
// client's Crypto. Not covered: the goroutines the machine starts on its
// own (answering another device's key request, unwedging an Olm session).
type lockedCrypto struct {
	mu      sync.Mutex
	cli     *mautrix.Client
	helper  mautrix.CryptoHelper      // a *cryptohelper.CryptoHelper
	onError func(*event.Event, error) // an event that cannot be decrypted
	syncer  mautrix.DispatchableSyncer
}

var _ mautrix.CryptoHelper = (*lockedCrypto)(nil)

// How long a key not yet received is waited for, then asked for and
// waited for again, before the event is reported undecryptable (mautrix's
// helper waits as long).
const (
	sessionWait       = 3 * time.Second
	sessionWaitLonger = 22 * time.Second
)

// Init starts the helper, the client's syncer wrapped while it registers
// its handlers (lockingSyncer). Call it before the client syncs.
func (c *lockedCrypto) Init(ctx context.Context) error {
	inner, ok := c.cli.Syncer.(dispatchingSyncer)
	if !ok {
		return fmt.Errorf("matrix: the syncer %T cannot dispatch decrypted events", c.cli.Syncer)
	}
	c.syncer = inner
	c.cli.Syncer = lockingSyncer{dispatchingSyncer: inner, c: c}
	defer func() { c.cli.Syncer = inner }()
	return c.helper.Init(ctx)
}

func (c *lockedCrypto) Encrypt(ctx context.Context, room id.RoomID, typ event.Type, content any) (*event.EncryptedEventContent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.helper.Encrypt(ctx, room, typ, content)
}

func (c *lockedCrypto) Decrypt(ctx context.Context, evt *event.Event) (*event.Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.helper.Decrypt(ctx, evt)
}

// WaitForSession waits without the lock: the key it waits for arrives
// through the sync handlers, which take it.
func (c *lockedCrypto) WaitForSession(ctx context.Context, room id.RoomID, sender id.SenderKey, session id.SessionID, timeout time.Duration) bool {
	return c.helper.WaitForSession(ctx, room, sender, session, timeout)
}

func (c *lockedCrypto) RequestSession(ctx context.Context, room id.RoomID, sender id.SenderKey, session id.SessionID, user id.UserID, device id.DeviceID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.helper.RequestSession(ctx, room, sender, session, user, device)
}

// handleEncrypted replaces the helper's handler of encrypted events, which
// decrypts without the lock: it decrypts under it and dispatches after.
// A key not received yet is waited for in the background, as the helper
// does, except for an initial sync's old events.
func (c *lockedCrypto) handleEncrypted(ctx context.Context, evt *event.Event) {
	dec, err := c.Decrypt(ctx, evt)
	switch {
	case errors.Is(err, crypto.ErrNoSessionFound) && ctx.Value(mautrix.SyncTokenContextKey) != "":
		go c.awaitSession(ctx, evt)
	case err != nil:
		c.onError(evt, err)
	default:
		c.dispatch(ctx, dec)
	}
}

// awaitSession decrypts evt once its key arrives, asking the sender's
// devices for it if it is slow to; it gives up when ctx ends.
func (c *lockedCrypto) awaitSession(ctx context.Context, evt *event.Event) {
	content := evt.Content.AsEncrypted()
	if !c.WaitForSession(ctx, evt.RoomID, content.SenderKey, content.SessionID, sessionWait) {
		if ctx.Err() != nil {
			return
		}
		//lint:ignore SA1019 a blank device ID asks all the sender's devices
		c.RequestSession(ctx, evt.RoomID, content.SenderKey, content.SessionID, evt.Sender, content.DeviceID)
		if !c.WaitForSession(ctx, evt.RoomID, content.SenderKey, content.SessionID, sessionWaitLonger) {
			if ctx.Err() == nil {
				c.onError(evt, crypto.ErrNoSessionFound)
			}
			return
		}
	}
	dec, err := c.Decrypt(ctx, evt)
	if err != nil {
		c.onError(evt, err)
		return
	}
	c.dispatch(ctx, dec)
}

// dispatch hands a decrypted event to the syncer's handlers, as the
// helper would.
func (c *lockedCrypto) dispatch(ctx context.Context, dec *event.Event) {
	dec.Mautrix.EventSource |= event.SourceDecrypted
	c.syncer.Dispatch(ctx, dec)
}

// dispatchingSyncer is a client's syncer that handlers can be added to and
// that dispatches an event to them.
type dispatchingSyncer interface {
	mautrix.Syncer
	mautrix.ExtensibleSyncer
	mautrix.DispatchableSyncer
}

// lockingSyncer is the client's syncer while the helper registers its
// handlers: each runs under the lock, and its handler of encrypted events
// is replaced by handleEncrypted.
type lockingSyncer struct {
	dispatchingSyncer
	c *lockedCrypto
}

func (s lockingSyncer) OnSync(h mautrix.SyncHandler) {
	s.dispatchingSyncer.OnSync(func(ctx context.Context, resp *mautrix.RespSync, since string) bool {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		return h(ctx, resp, since)
	})
}

func (s lockingSyncer) OnEventType(t event.Type, h mautrix.EventHandler) {
	if t == event.EventEncrypted {
		s.dispatchingSyncer.OnEventType(t, s.c.handleEncrypted)
		return
	}
	s.dispatchingSyncer.OnEventType(t, s.locked(h))
}

func (s lockingSyncer) OnEvent(h mautrix.EventHandler) { s.dispatchingSyncer.OnEvent(s.locked(h)) }

func (s lockingSyncer) locked(h mautrix.EventHandler) mautrix.EventHandler {
	return func(ctx context.Context, evt *event.Event) {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		h(ctx, evt)
	}
}
