package dendrite

import (
	"net/http"
	"slices"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Notification is one entry of a user's notifications as the homeserver
// decided them with its push rules: what pinged whom, decided outside the
// bot's own code.
type Notification struct {
	Room      id.RoomID
	Event     id.EventID
	Sender    id.UserID
	Highlight bool // the set_tweak highlight action: a mention, @room, the user's name
}

// Notifications returns the user's notifications (GET
// /_matrix/client/v3/notifications), newest first, up to 100.
func (c *Client) Notifications() []Notification {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	var resp struct {
		Notifications []struct {
			RoomID  id.RoomID `json:"room_id"`
			Actions []any     `json:"actions"`
			Event   struct {
				ID     id.EventID `json:"event_id"`
				Sender id.UserID  `json:"sender"`
			} `json:"event"`
		} `json:"notifications"`
	}
	u := c.Matrix.BuildURLWithQuery(mautrix.ClientURLPath{"v3", "notifications"}, map[string]string{"limit": "100"})
	_, err := c.Matrix.MakeRequest(ctx, http.MethodGet, u, nil, &resp)
	c.check(err, "reading notifications")
	out := make([]Notification, 0, len(resp.Notifications))
	for _, n := range resp.Notifications {
		out = append(out, Notification{Room: n.RoomID, Event: n.Event.ID, Sender: n.Event.Sender, Highlight: highlights(n.Actions)})
	}
	return out
}

// highlights reports whether push actions hold {"set_tweak": "highlight"}
// with a value other than false.
func highlights(actions []any) bool {
	return slices.ContainsFunc(actions, func(a any) bool {
		m, ok := a.(map[string]any)
		return ok && m["set_tweak"] == "highlight" && m["value"] != false
	})
}

// SetPower gives user the power level in room (the caller must be able to
// change power levels there, as a room's creator can).
func (c *Client) SetPower(room id.RoomID, user id.UserID, level int) {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	var pl event.PowerLevelsEventContent
	err := c.Matrix.StateEvent(ctx, room, event.StatePowerLevels, "", &pl)
	c.check(err, "reading the power levels of %s", room)
	pl.SetUserLevel(user, level)
	_, err = c.Matrix.SendStateEvent(ctx, room, event.StatePowerLevels, "", &pl)
	c.check(err, "setting %s's power in %s to %d", user, room, level)
}
