package fakeslack

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// --- interactivity ---

// responseURL is a response_url handed out with an interaction.
type responseURL struct {
	id        string
	kind      string // "actions" or "commands"
	channel   string
	msgTS     string // the message interacted with ("" for slash commands)
	threadTS  string
	ephemeral bool
	user      string
	uses      int
	created   time.Time
}

func (s *Server) newResponseURLLocked(kind, channel, msgTS, threadTS, user string, ephemeral bool) (*responseURL, string) {
	r := &responseURL{id: itoa(4873225519100+s.seqLocked()) + "/" + randAlnum(24), kind: kind, channel: channel, msgTS: msgTS, threadTS: threadTS, user: user, ephemeral: ephemeral, created: time.Now()}
	s.responses[r.id] = r
	return r, s.URL + "/" + kind + "/" + s.Opts.TeamID + "/" + r.id
}

func (s *Server) seqLocked() int {
	s.seq++
	return s.seq
}

// interactionTargetLocked finds the message a person interacts with: a
// channel message, or one of their ephemeral messages.
func (s *Server) interactionTargetLocked(user, channel, ts string) (*channelState, *msg, error) {
	ch := s.channels[channel]
	if ch == nil {
		return nil, nil, fmt.Errorf("fakeslack: no channel %s", channel)
	}
	if m := ch.get(ts); m != nil {
		return ch, m, nil
	}
	for _, m := range ch.ephemerals {
		if m.ts == ts && !m.deleted && m.ephemeralUser == user {
			return ch, m, nil
		}
	}
	return nil, nil, fmt.Errorf("fakeslack: no message %s in %s visible to %s", ts, channel, user)
}

func stateKey(channel, ts, user string) string { return channel + "/" + ts + "/" + user }

// stateValuesLocked is state.values: the person's current input in the
// message's elements that still exist.
func (s *Server) stateValuesLocked(m *msg, user string) map[string]any {
	out := map[string]any{}
	st := s.states[stateKey(m.channel, m.ts, user)]
	for blockID, actions := range st {
		for actionID, v := range actions {
			el, ok := findElement(m.blocks, actionID)
			if !ok || el.blockID != blockID {
				continue
			}
			b, _ := out[blockID].(map[string]any)
			if b == nil {
				b = map[string]any{}
				out[blockID] = b
			}
			b[actionID] = v
		}
	}
	return out
}

func (s *Server) setStateLocked(m *msg, user, blockID, actionID string, v any) {
	k := stateKey(m.channel, m.ts, user)
	if s.states[k] == nil {
		s.states[k] = map[string]map[string]any{}
	}
	if s.states[k][blockID] == nil {
		s.states[k][blockID] = map[string]any{}
	}
	s.states[k][blockID][actionID] = v
}

// blockActionsLocked builds and delivers a block_actions payload
// (socket_interactive_block_actions_button.json).
func (s *Server) blockActionsLocked(user string, ch *channelState, m *msg, action map[string]any, what string) {
	u := s.ensureUserLocked(user)
	ephemeral := m.ephemeralUser != ""
	container := map[string]any{"type": "message", "message_ts": m.ts, "channel_id": ch.ID, "is_ephemeral": ephemeral}
	if m.threadTS != "" {
		container["thread_ts"] = m.threadTS
	}
	_, ruURL := s.newResponseURLLocked("actions", ch.ID, m.ts, m.threadTS, user, ephemeral)
	action["action_ts"] = s.newTS()
	chInfo := map[string]any{"id": ch.ID, "name": ch.Name}
	if ch.Type == "im" {
		chInfo["name"] = "directmessage"
	}
	payload := map[string]any{
		"type":                  "block_actions",
		"user":                  map[string]any{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": s.Opts.TeamID},
		"api_app_id":            s.Opts.AppID,
		"token":                 s.Opts.VerificationToken,
		"container":             container,
		"trigger_id":            s.triggerID(),
		"team":                  map[string]any{"id": s.Opts.TeamID, "domain": s.Opts.TeamDomain},
		"enterprise":            nil,
		"is_enterprise_install": false,
		"channel":               chInfo,
		"state":                 map[string]any{"values": s.stateValuesLocked(m, user)},
		"response_url":          ruURL,
		"actions":               []any{action},
	}
	if !ephemeral {
		payload["message"] = s.wireLocked(ch, m)
	}
	b, _ := json.Marshal(payload)
	s.deliverLocked(&envelope{Envelope: Envelope{Type: "interactive", Payload: b}, what: what})
	s.notifyLocked()
}

// Click presses the button with actionID in the current blocks of a message
// (or of one of user's ephemeral messages): a block_actions payload with the
// message's current blocks and the user's state.values. Error if the message
// has no such button (a button that no longer exists can't be clicked).
func (s *Server) Click(user, channel, messageTS, actionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, m, err := s.interactionTargetLocked(user, channel, messageTS)
	if err != nil {
		return err
	}
	el, ok := findElement(m.blocks, actionID)
	if !ok || (el.typ != "button" && el.typ != "workflow_button") {
		return fmt.Errorf("fakeslack: Click: message %s has no button %q (action_ids: %v)", messageTS, actionID, s.toMessage(m).ActionIDs())
	}
	action := map[string]any{"type": el.typ, "action_id": actionID, "block_id": el.blockID, "text": el.el["text"]}
	for _, k := range []string{"value", "style", "url"} {
		if v, ok := el.el[k]; ok {
			action[k] = v
		}
	}
	s.blockActionsLocked(user, ch, m, action, "click "+actionID)
	return nil
}

// ForgeAction delivers a block_actions payload for a message with an
// action that message need not have: what a tampered or replayed payload
// could claim (a button value naming a prompt of another message or
// channel). action holds the action's fields (action_id, value, block_id,
// …); type defaults to "button". Slack itself never sends this for a
// button that is not there: it is for testing that an app checks.
func (s *Server) ForgeAction(user, channel, messageTS string, action map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, m, err := s.interactionTargetLocked(user, channel, messageTS)
	if err != nil {
		return err
	}
	a := map[string]any{"type": "button"}
	for k, v := range action {
		a[k] = v
	}
	s.blockActionsLocked(user, ch, m, a, "forged "+str(a["action_id"]))
	return nil
}

// Select picks the option with value in the static_select (or radio_buttons,
// overflow) with actionID: block_actions with selected_option, and the choice
// kept in state.values for later clicks.
func (s *Server) Select(user, channel, messageTS, actionID, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, m, err := s.interactionTargetLocked(user, channel, messageTS)
	if err != nil {
		return err
	}
	el, ok := findElement(m.blocks, actionID)
	if !ok || (el.typ != "static_select" && el.typ != "radio_buttons" && el.typ != "overflow") {
		return fmt.Errorf("fakeslack: Select: message %s has no static_select/radio_buttons/overflow %q", messageTS, actionID)
	}
	var opt map[string]any
	for _, o := range optionsOf(el.el) {
		if str(o["value"]) == value {
			opt = o
		}
	}
	if opt == nil {
		return fmt.Errorf("fakeslack: Select: %q has no option with value %q", actionID, value)
	}
	action := map[string]any{"type": el.typ, "action_id": actionID, "block_id": el.blockID, "selected_option": opt}
	if ph, ok := el.el["placeholder"]; ok {
		action["placeholder"] = ph
	}
	if el.typ != "overflow" {
		s.setStateLocked(m, user, el.blockID, actionID, map[string]any{"type": el.typ, "selected_option": opt})
	}
	s.blockActionsLocked(user, ch, m, action, "select "+actionID+"="+value)
	return nil
}

// Check sets the checked options (by value) of the checkboxes (or
// multi_static_select) with actionID: block_actions with selected_options,
// kept in state.values; clicking a submit button is a separate Click.
func (s *Server) Check(user, channel, messageTS, actionID string, values []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, m, err := s.interactionTargetLocked(user, channel, messageTS)
	if err != nil {
		return err
	}
	el, ok := findElement(m.blocks, actionID)
	if !ok || (el.typ != "checkboxes" && el.typ != "multi_static_select") {
		return fmt.Errorf("fakeslack: Check: message %s has no checkboxes %q", messageTS, actionID)
	}
	want := map[string]bool{}
	for _, v := range values {
		want[v] = true
	}
	selected := []any{}
	for _, o := range optionsOf(el.el) {
		if want[str(o["value"])] {
			selected = append(selected, o)
			delete(want, str(o["value"]))
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("fakeslack: Check: %q has no options %v", actionID, keys(want))
	}
	action := map[string]any{"type": el.typ, "action_id": actionID, "block_id": el.blockID, "selected_options": selected}
	s.setStateLocked(m, user, el.blockID, actionID, map[string]any{"type": el.typ, "selected_options": selected})
	s.blockActionsLocked(user, ch, m, action, "check "+actionID)
	return nil
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Slash runs a slash command (socket_slash_command.json). The ack's payload
// (or, over HTTP, the answer's body) is the command's response: ephemeral
// to the user by default, in the channel with response_type "in_channel".
func (s *Server) Slash(user, channel, command, text string) error {
	if !strings.HasPrefix(command, "/") {
		return fmt.Errorf("fakeslack: Slash: command %q must start with /", command)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.ensureUserLocked(user)
	ch := s.ensureChannelLocked(channel)
	if ch.Type != "im" {
		ch.addMember(user)
	}
	ru, ruURL := s.newResponseURLLocked("commands", ch.ID, "", "", user, false)
	name := ch.Name
	if ch.Type == "im" {
		name = "directmessage"
	}
	fields := map[string]string{
		"token": s.Opts.VerificationToken, "team_id": s.Opts.TeamID, "team_domain": s.Opts.TeamDomain,
		"channel_id": ch.ID, "channel_name": name, "user_id": u.ID, "user_name": u.Name,
		"command": command, "text": text, "api_app_id": s.Opts.AppID, "is_enterprise_install": "false",
		"response_url": ruURL, "trigger_id": s.triggerID(),
	}
	b, _ := json.Marshal(fields)
	s.deliverLocked(&envelope{Envelope: Envelope{Type: "slash_commands", Payload: b}, form: fields, resp: ru, what: command + " " + text})
	return nil
}
