package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/internal/dendrite"
)

// TestSettingsFileOnMatrix: on a real homeserver, a settings file naming
// a room by its id, written while the bot runs (the room is made after
// the start), applies there without a restart: `settings` in the room
// shows the file's value and line; a bad file over it leaves it so.
func TestSettingsFileOnMatrix(t *testing.T) {
	r := newMatrixEnvRun(t)
	file := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(file, nil, 0o600); err != nil { // empty: no settings
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for /readyz
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r.env = append(r.env, "CLAUDEOPS_SETTINGS_FILE="+file, "CLAUDEOPS_HTTP_ADDR="+addr)
	cmd := r.start()
	o := &opsView{t: t, addr: addr, log: func() string { return "(in the test's output)" }}
	alice, botUser := r.alice, r.bot
	room := alice.CreateRoom(dendrite.RoomOptions{Name: "ops", Invite: []id.UserID{botUser.ID}})
	if !alice.WaitFor(90*time.Second, func() bool { return alice.Membership(room, botUser.ID) == event.MembershipJoin }) {
		t.Fatal("the bot did not join")
	}
	content := "channels:\n  matrix/" + room.String() + ":\n    label: \"#ops\"\n    model: claude-haiku-4-5\n"
	writeAtomic(t, file, content)
	want := "claude-haiku-4-5` — channel matrix/" + room.String() + " (#ops), from the settings file, line 4"
	// The file is read within seconds: ask until settings shows it.
	shown := func() bool {
		root := alice.SendText(room, "settings", botUser.ID, "")
		return alice.WaitFor(10*time.Second, func() bool {
			for _, m := range alice.Thread(room, root) {
				if m.Sender == botUser.ID && strings.Contains(m.Body, want) {
					return true
				}
			}
			return false
		})
	}
	deadline := time.Now().Add(90 * time.Second)
	for !shown() {
		if time.Now().After(deadline) {
			t.Fatalf("settings never showed %q", want)
		}
	}
	writeAtomic(t, file, strings.Replace(content, "model:", "modle:", 1))
	o.waitReady("the bad file refused", func(d readyDoc) bool {
		return d.SettingsFile != nil && strings.Contains(d.SettingsFile.Refused, `line 4: unknown setting "modle"`)
	})
	if !shown() {
		t.Errorf("after a bad file, settings no longer shows %q", want)
	}
	r.stop(cmd)
}
