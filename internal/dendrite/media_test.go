package dendrite

import (
	"bytes"
	"slices"
	"testing"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
)

// TestUploadLimit: StartWith's limit is what the media config says (both
// the authenticated and the legacy endpoint) and what uploads are held to.
func TestUploadLimit(t *testing.T) {
	t.Parallel()
	s := StartWith(t, Options{MaxUploadBytes: 1000})
	alice := s.Client(t, s.Register(t, "alice"), ClientOptions{})
	ctx := t.Context()
	cfg, err := alice.Matrix.GetMediaConfig(ctx)
	if err != nil || cfg.UploadSize != 1000 {
		t.Errorf("media config: %+v %v, want m.upload.size 1000", cfg, err)
	}
	var legacy mautrix.RespMediaConfig
	if _, err := alice.Matrix.MakeRequest(ctx, "GET", alice.Matrix.BuildURL(mautrix.MediaURLPath{"v3", "config"}), nil, &legacy); err != nil || legacy.UploadSize != 1000 {
		t.Errorf("legacy media config: %+v %v, want m.upload.size 1000", legacy, err)
	}
	if _, err := alice.Matrix.UploadBytes(ctx, bytes.Repeat([]byte("x"), 1000), "text/plain"); err != nil {
		t.Errorf("an upload at the limit: %v", err)
	}
	if _, err := alice.Matrix.UploadBytes(ctx, bytes.Repeat([]byte("x"), 1001), "text/plain"); err == nil {
		t.Error("an upload over the limit was taken")
	}
}

// TestNotificationsHighlight: the notifications say which messages
// highlight a user by the server's push rules: a plain-body @room from
// someone with the power to notify the room does, a word joiner in it or
// a message without it does not.
func TestNotificationsHighlight(t *testing.T) {
	t.Parallel()
	alice, bob, room := pair(t, ClientOptions{}, RoomOptions{Name: "ops"})
	alice.SetPower(room, bob.User.ID, 50)
	loud := bob.SendRaw(room, event.EventMessage, map[string]any{"msgtype": "m.text", "body": "@room deploy now"})
	quiet := bob.SendRaw(room, event.EventMessage, map[string]any{"msgtype": "m.text", "body": "@\u2060room deploy now", "m.mentions": map[string]any{}})
	plain := bob.SendText(room, "nothing to see", "", "")
	var got []Notification
	if !alice.WaitFor(wait, func() bool {
		got = alice.Notifications()
		return slices.ContainsFunc(got, func(n Notification) bool { return n.Event == plain })
	}) {
		t.Fatalf("alice was never notified of %s: %+v", plain, got)
	}
	want := map[string]bool{loud.String(): true, quiet.String(): false, plain.String(): false}
	for _, n := range got {
		if w, ok := want[n.Event.String()]; ok && n.Highlight != w {
			t.Errorf("%s highlighted %v, want %v", n.Event, n.Highlight, w)
		}
		delete(want, n.Event.String())
	}
	if len(want) != 0 {
		t.Errorf("no notification of %v", want)
	}
}
