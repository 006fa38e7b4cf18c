package matrix_test

import (
	"testing"
	"time"

	"maunium.net/go/mautrix/event"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/settings"
)

// TestInviteAskedOfThatRoom: the bot accepts an invite to a room from
// someone the settings let use it in that room, and refuses the same
// person's invite to another room (Dendrite's membership is the oracle):
// being named in one room does not bring the bot into others.
func TestInviteAskedOfThatRoom(t *testing.T) {
	var r *settings.Resolver
	h := newHarness(t, options{mod: func(bc *bot.Config, _ *matrix.Config) {
		r = settings.New(bot.ConfigLayer(*bc), bc.Admins)
		bc.Scopes = r
	}})
	named := h.mallory.CreateRoom(dendrite.RoomOptions{Name: "mallory's team"})
	other := h.mallory.CreateRoom(dendrite.RoomOptions{Name: "mallory's other"})
	r.SetChat(settings.Where{Platform: matrix.Platform, Channel: named.String()},
		settings.Scope{Level: settings.LevelChannel, Key: matrix.Platform + "/" + named.String()},
		settings.Users, h.mallory.User.ID.String(), "@root:example.org", time.Now())

	h.mallory.Invite(other, h.botUser.ID)
	if !h.mallory.WaitFor(wait, func() bool { return h.mallory.Membership(other, h.botUser.ID) == event.MembershipLeave }) {
		t.Fatalf("the bot did not refuse the invite to a room mallory is not named in: %q", h.mallory.Membership(other, h.botUser.ID))
	}
	h.mallory.Invite(named, h.botUser.ID)
	if !h.mallory.WaitFor(wait, func() bool { return h.mallory.Membership(named, h.botUser.ID) == event.MembershipJoin }) {
		t.Fatalf("the bot did not join the room mallory is named in: %q", h.mallory.Membership(named, h.botUser.ID))
	}
	h.mallory.Invite(named, h.alice.User.ID) // the harness reads as alice
	h.alice.Join(named)
	root := h.mention(h.mallory, named, "hello from my room")
	h.waitBot(named, root, `ok: hello from my room`)
}
