package dendrite

import (
	"context"
	"slices"
	"sync"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// timeline is what a Client has seen. The sync goroutine and mautrix's
// decryption goroutines write it while the test reads it.
type timeline struct {
	mu        sync.Mutex
	ended     bool                         // the test is over
	rooms     map[id.RoomID][]*event.Event // timeline events, arrival order
	pos       map[id.EventID]int           // index in its room's slice
	members   map[id.RoomID]map[id.UserID]event.Membership
	encrypted map[id.RoomID]bool
	redacted  map[id.EventID]bool
}

func newTimeline() timeline {
	return timeline{
		rooms:     map[id.RoomID][]*event.Event{},
		pos:       map[id.EventID]int{},
		members:   map[id.RoomID]map[id.UserID]event.Membership{},
		encrypted: map[id.RoomID]bool{},
		redacted:  map[id.EventID]bool{},
	}
}

// Message is one message of a thread as a user sees it: edits applied.
type Message struct {
	ID            id.EventID
	Sender        id.UserID
	Type          event.Type
	MsgType       event.MessageType
	Body          string // for polls, the text fallback
	FormattedBody string
	Edits         int            // m.replace edits applied
	Raw           map[string]any // latest content (the last edit's m.new_content)
}

// record is the syncer's handler for every event, and gets decrypted
// events a second time, with the encrypted one's ID.
func (tl *timeline) record(_ context.Context, evt *event.Event) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	room := evt.RoomID
	if evt.StateKey != nil && room != "" { // state from any section, invites included
		switch evt.Type.Type {
		case event.StateMember.Type:
			if tl.members[room] == nil {
				tl.members[room] = map[id.UserID]event.Membership{}
			}
			tl.members[room][id.UserID(*evt.StateKey)] = event.Membership(str(evt.Content.Raw, "membership"))
		case event.StateEncryption.Type:
			tl.encrypted[room] = true
		}
	}
	if evt.Mautrix.EventSource&event.SourceTimeline == 0 || evt.ID == "" { // decrypted ones keep the flag
		return
	}
	if evt.Unsigned.RedactedBecause != nil {
		tl.redacted[evt.ID] = true
	}
	if evt.Type.Type == event.EventRedaction.Type {
		target := evt.Redacts // room versions up to 10 (Dendrite's default)
		if target == "" {
			target = id.EventID(str(evt.Content.Raw, "redacts")) // v11
		}
		tl.redacted[target] = true
	}
	if i, seen := tl.pos[evt.ID]; seen {
		// A decryption replaces its encrypted original; a repeat (history
		// after a join) changes nothing.
		if evt.Mautrix.EventSource&event.SourceDecrypted != 0 {
			tl.rooms[room][i] = evt
		}
		return
	}
	tl.pos[evt.ID] = len(tl.rooms[room])
	tl.rooms[room] = append(tl.rooms[room], evt)
}

func (tl *timeline) setEncrypted(room id.RoomID) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.encrypted[room] = true
}

func (tl *timeline) isEncrypted(room id.RoomID) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.encrypted[room]
}

// Events returns the room's timeline events seen so far, in arrival order,
// each once; decrypted ones in place of their encrypted originals.
func (tl *timeline) Events(room id.RoomID) []*event.Event {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return slices.Clone(tl.rooms[room])
}

// Membership is user's latest membership in room that the client has seen
// ("" if none).
func (tl *timeline) Membership(room id.RoomID, user id.UserID) event.Membership {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.members[room][user]
}

// Reactions returns the reactions to target not taken back (redacted).
func (tl *timeline) Reactions(room id.RoomID, target id.EventID) []*event.Event {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []*event.Event
	for _, evt := range tl.rooms[room] {
		relType, to, _ := relation(evt.Content.Raw)
		if evt.Type == event.EventReaction && relType == event.RelAnnotation && to == target && !tl.redacted[evt.ID] {
			out = append(out, evt)
		}
	}
	return out
}

// Thread returns the root and the messages in its thread, including poll
// starts and the ends of those polls (poll votes are not messages), with
// edits applied. Edits carry no thread relation: they name the original.
// A message not decrypted yet has Type m.room.encrypted and no body.
func (tl *timeline) Thread(room id.RoomID, root id.EventID) []Message {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var msgs []Message
	index := map[id.EventID]int{}
	for _, evt := range tl.rooms[room] {
		relType, to, _ := relation(evt.Content.Raw)
		isPollEnd := evt.Type == event.EventUnstablePollEnd || evt.Type.Type == "m.poll.end"
		_, toThread := index[to]
		if evt.ID == root || (relType == event.RelThread && to == root) || (isPollEnd && relType == event.RelReference && toThread) {
			index[evt.ID] = len(msgs)
			msgs = append(msgs, newMessage(evt))
		}
	}
	for _, evt := range tl.rooms[room] {
		relType, to, newContent := relation(evt.Content.Raw)
		i, ok := index[to]
		// Only the author may edit; a missing m.new_content means the edit
		// is still encrypted.
		if relType != event.RelReplace || !ok || evt.Sender != msgs[i].Sender || newContent == nil {
			continue
		}
		msgs[i].Raw = newContent
		msgs[i].MsgType, msgs[i].Body, msgs[i].FormattedBody = fields(newContent)
		msgs[i].Edits++
	}
	return msgs
}

func newMessage(evt *event.Event) Message {
	m := Message{ID: evt.ID, Sender: evt.Sender, Type: evt.Type, Raw: evt.Content.Raw}
	m.MsgType, m.Body, m.FormattedBody = fields(evt.Content.Raw)
	return m
}

func fields(content map[string]any) (event.MessageType, string, string) {
	body := str(content, "body")
	if body == "" {
		body = str(content, "org.matrix.msc1767.text") // poll start and end fallback
	}
	return event.MessageType(str(content, "msgtype")), body, str(content, "formatted_body")
}

// relation reads m.relates_to from raw content, where it is for every event
// type (encrypted events keep it in clear), and an edit's m.new_content.
func relation(content map[string]any) (event.RelationType, id.EventID, map[string]any) {
	rel, _ := content["m.relates_to"].(map[string]any)
	newContent, _ := content["m.new_content"].(map[string]any)
	return event.RelationType(str(rel, "rel_type")), id.EventID(str(rel, "event_id")), newContent
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
