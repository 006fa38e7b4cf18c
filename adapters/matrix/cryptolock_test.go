//go:build goolm

package matrix

import (
	"context"
	"errors"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// fakeCrypto stands for mautrix's crypto helper: Init registers handlers
// on the client's syncer as the helper does; Decrypt answers with dec or
// err; WaitForSession finds no key. Each call notes whether the lock was
// held (held) under its name in calls.
type fakeCrypto struct {
	cli   *mautrix.Client
	dec   *event.Event
	err   error
	held  func() bool
	calls map[string]bool
}

func (f *fakeCrypto) note(name string) { f.calls[name] = f.held() }

func (f *fakeCrypto) Init(context.Context) error {
	s := f.cli.Syncer.(mautrix.ExtensibleSyncer)
	s.OnSync(func(context.Context, *mautrix.RespSync, string) bool { f.note("sync"); return true })
	s.OnEventType(event.StateMember, func(context.Context, *event.Event) { f.note("member") })
	s.OnEvent(func(_ context.Context, evt *event.Event) {
		if evt.Type == event.StateMember {
			f.note("any event")
		}
	})
	s.OnEventType(event.EventEncrypted, func(context.Context, *event.Event) { f.note("the helper's decryption") })
	return nil
}

func (f *fakeCrypto) Encrypt(context.Context, id.RoomID, event.Type, any) (*event.EncryptedEventContent, error) {
	f.note("encrypt")
	return &event.EncryptedEventContent{}, nil
}

func (f *fakeCrypto) Decrypt(context.Context, *event.Event) (*event.Event, error) {
	f.note("decrypt")
	return f.dec, f.err
}

func (f *fakeCrypto) WaitForSession(context.Context, id.RoomID, id.SenderKey, id.SessionID, time.Duration) bool {
	f.note("wait")
	return false
}

func (f *fakeCrypto) RequestSession(context.Context, id.RoomID, id.SenderKey, id.SessionID, id.UserID, id.DeviceID) {
	f.note("request")
}

// TestLockedCrypto: every call into the crypto machine holds the lock (so
// that sending and syncing never use it at once), and neither the
// adapter's handlers of a decrypted event nor the report of an event that
// cannot be decrypted run under it: they may send, which would deadlock.
func TestLockedCrypto(t *testing.T) {
	decrypted := &event.Event{Type: event.EventMessage, ID: "$m"}
	for _, tc := range []struct {
		name  string
		dec   *event.Event
		err   error
		token string // the sync's position; empty for the initial sync
		want  map[string]bool
	}{
		{name: "decrypted", dec: decrypted, token: "s1", want: map[string]bool{
			"decrypt": true, "handler": false, "encrypt": true}},
		{name: "undecryptable", err: errors.New("bad MAC"), token: "s1", want: map[string]bool{
			"decrypt": true, "report": false, "encrypt": true}},
		{name: "key awaited, asked for, never came", err: crypto.ErrNoSessionFound, token: "s1", want: map[string]bool{
			"decrypt": true, "wait": false, "request": true, "report": false, "encrypt": true}},
		{name: "key missing in the initial sync: not awaited", err: crypto.ErrNoSessionFound, want: map[string]bool{
			"decrypt": true, "report": false, "encrypt": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			syncer := mautrix.NewDefaultSyncer()
			cli := &mautrix.Client{Syncer: syncer}
			fake := &fakeCrypto{cli: cli, dec: tc.dec, err: tc.err, calls: map[string]bool{}}
			reported := make(chan struct{})
			c := &lockedCrypto{cli: cli, helper: fake}
			fake.held = func() bool {
				if c.mu.TryLock() {
					c.mu.Unlock()
					return false
				}
				return true
			}
			// Both send, as the adapter's do; under the lock, that would
			// deadlock (the test notes the lock was held instead).
			send := func(ctx context.Context) {
				if fake.held() {
					return
				}
				if _, err := c.Encrypt(ctx, "!r", event.EventMessage, nil); err != nil {
					t.Error(err)
				}
			}
			c.onError = func(*event.Event, error) {
				fake.note("report")
				send(context.Background())
				close(reported)
			}
			syncer.OnEventType(event.EventMessage, func(ctx context.Context, _ *event.Event) {
				fake.note("handler")
				send(ctx)
			})
			if err := c.Init(t.Context()); err != nil {
				t.Fatal(err)
			}
			if cli.Syncer != syncer {
				t.Fatalf("the client's syncer is %T after Init, want the one it had", cli.Syncer)
			}

			ctx := context.WithValue(t.Context(), mautrix.SyncTokenContextKey, tc.token)
			handled := make(chan struct{})
			go func() {
				defer close(handled)
				syncer.Dispatch(ctx, &event.Event{Type: event.EventEncrypted, Content: event.Content{Parsed: &event.EncryptedEventContent{}}})
			}()
			select {
			case <-handled:
			case <-time.After(10 * time.Second):
				t.Fatal("the encrypted event's handling deadlocked")
			}
			if _, ok := tc.want["report"]; ok {
				select {
				case <-reported:
				case <-time.After(10 * time.Second):
					t.Fatal("the undecryptable event was never reported")
				}
			}
			// The helper's own handlers, under the lock.
			if err := syncer.ProcessResponse(ctx, &mautrix.RespSync{}, tc.token); err != nil {
				t.Fatal(err)
			}
			syncer.Dispatch(ctx, &event.Event{Type: event.StateMember})
			tc.want["sync"], tc.want["member"], tc.want["any event"] = true, true, true

			for name, held := range fake.calls {
				want, ok := tc.want[name]
				switch {
				case !ok:
					t.Errorf("%s ran, unexpected", name)
				case held != want:
					t.Errorf("%s ran with the lock held: %v, want %v", name, held, want)
				}
			}
			for name := range tc.want {
				if _, ok := fake.calls[name]; !ok {
					t.Errorf("%s never ran", name)
				}
			}
		})
	}
}
