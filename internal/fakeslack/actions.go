package fakeslack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// People acting in the workspace. Text arguments are what the person typed
// (mentions written as <@U…>, <#C…>, <!here>, links as <url|text>); the
// message text is escaped as Slack escapes it (& → &amp; etc. outside those).
// Unknown users and channels are created (public channel, bot a member).

// Post posts a top-level message and delivers a `message` event, and an
// `app_mention` event too if the text mentions the bot (different event_ids,
// same channel and ts). No events if the bot is not in the channel.
func (s *Server) Post(user, channel, text string) (ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.ensureChannelLocked(channel)
	return s.postAsUserLocked(user, ch, "", text).ts
}

// Reply posts in the thread of threadTS (any message of the thread), with
// the same events as Post. Reporting a test error if there is no such
// message, it returns "".
func (s *Server) Reply(user, channel, threadTS, text string) (ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.ensureChannelLocked(channel)
	root := ch.threadRoot(threadTS)
	if root == nil {
		s.t.Errorf("fakeslack: Reply: no message %s in %s", threadTS, channel)
		return ""
	}
	return s.postAsUserLocked(user, ch, root.ts, text).ts
}

// DM sends a direct message to the bot: a `message` event with channel_type
// "im" and no app_mention.
func (s *Server) DM(user, text string) (channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUserLocked(user)
	ch := s.imChannelLocked(user)
	return ch.ID, s.postAsUserLocked(user, ch, "", text).ts
}

// DMReply replies in a thread of the user's DM with the bot.
func (s *Server) DMReply(user, threadTS, text string) (channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.imChannelLocked(user)
	root := ch.threadRoot(threadTS)
	if root == nil {
		s.t.Errorf("fakeslack: DMReply: no message %s in the DM of %s", threadTS, user)
		return ch.ID, ""
	}
	return ch.ID, s.postAsUserLocked(user, ch, root.ts, text).ts
}

// SharedFile is a file a person attaches to a message (ShareFile).
type SharedFile struct {
	Name, Mimetype string
	Content        []byte
	// URL, when set, is the file's url_private and url_private_download in
	// the events instead of the fake's own: a delivery naming another host.
	URL string
}

// ShareFile posts a message with a file, at top level (threadTS "") or in
// the thread of threadTS, with the events Post and Reply deliver: message
// (subtype file_share) and, when the text mentions the bot, app_mention,
// both carrying the file. The fake serves it at its url_private to the bot
// token; FileDownloads records every request for it.
func (s *Server) ShareFile(user, channel, threadTS, text string, f SharedFile) (ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.ensureChannelLocked(channel)
	if threadTS != "" {
		root := ch.threadRoot(threadTS)
		if root == nil {
			s.t.Errorf("fakeslack: ShareFile: no message %s in %s", threadTS, channel)
			return ""
		}
		threadTS = root.ts
	}
	fs := &fileState{
		File: File{ID: "F0" + randID("", 9), Name: f.Name, Title: f.Name, Size: len(f.Content),
			Content: append([]byte(nil), f.Content...), Channel: ch.ID, ThreadTS: threadTS},
		user: user, uploaded: true, created: time.Now().Unix(), mimetype: f.Mimetype, url: f.URL,
	}
	s.files[fs.ID] = fs
	m := s.postAsUserLocked(user, ch, threadTS, text, fs)
	fs.MessageTS = m.ts
	return m.ts
}

// FileDownload is one request for a file the fake hosts.
type FileDownload struct {
	FileID string
	// Authorized: the request carried the bot token.
	Authorized bool
}

// FileDownloads are the requests made so far for hosted files (url_private
// and url_private_download), in order.
func (s *Server) FileDownloads() []FileDownload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FileDownload(nil), s.downloads...)
}

func (s *Server) postAsUserLocked(user string, ch *channelState, threadTS, typed string, files ...*fileState) *msg {
	s.ensureUserLocked(user)
	if ch.Type != "im" {
		ch.addMember(user)
	}
	m := &msg{
		channel: ch.ID, ts: s.newTS(), user: user,
		text: escapeUserText(typed), blocks: richTextBlocks(typed), clientMsgID: newUUID(),
		files: files,
	}
	if len(files) > 0 {
		m.subtype = "file_share"
	}
	if threadTS != "" {
		root := ch.get(threadTS)
		root.threadTS = root.ts
		m.threadTS, m.parentUser = root.ts, root.user
	}
	ch.add(m)
	if s.botSeesLocked(ch) {
		ev := s.userEventLocked(ch, m, "message")
		ev["channel_type"] = ch.channelType()
		s.emitEventLocked(ev, ch.ID)
		if ch.Type != "im" && strings.Contains(m.text, "<@"+s.Opts.BotUserID+">") {
			mention := s.userEventLocked(ch, m, "app_mention")
			delete(mention, "parent_user_id")
			s.emitEventLocked(mention, ch.ID)
		}
	}
	s.notifyLocked()
	return m
}

// userEventLocked is the inner event of a person's message
// (socket_events_api_thread_message.json).
func (s *Server) userEventLocked(ch *channelState, m *msg, typ string) map[string]any {
	ev := map[string]any{
		"type": typ, "user": m.user, "text": m.text, "ts": m.ts,
		"client_msg_id": m.clientMsgID, "team": s.Opts.TeamID,
		"blocks": json.RawMessage(m.blocks), "channel": ch.ID, "event_ts": m.ts,
	}
	if m.threadTS != "" && m.threadTS != m.ts {
		ev["thread_ts"] = m.threadTS
		ev["parent_user_id"] = m.parentUser
	}
	if m.editedTS != "" {
		ev["edited"] = map[string]any{"user": m.editedBy, "ts": m.editedTS}
	}
	if len(m.files) > 0 {
		var files []map[string]any
		for _, f := range m.files {
			files = append(files, s.wireFile(f))
		}
		ev["files"], ev["upload"], ev["display_as_bot"] = files, true, false
		if typ == "message" {
			ev["subtype"] = "file_share"
		}
	}
	return ev
}

// EditMessage is a person editing their message: message_changed event.
func (s *Server) EditMessage(user, channel, ts, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil || ch.get(ts) == nil {
		return fmt.Errorf("fakeslack: EditMessage: no message %s in %s", ts, channel)
	}
	m := ch.get(ts)
	if m.user != user || m.isBot() {
		return fmt.Errorf("fakeslack: EditMessage: %s is not a message of %s", ts, user)
	}
	prev := s.wireLocked(nil, m)
	m.text, m.blocks = escapeUserText(text), richTextBlocks(text)
	m.editedBy, m.editedTS = user, s.newTS()
	if s.botSeesLocked(ch) {
		s.emitChangedLocked(ch, m, prev)
	}
	s.notifyLocked()
	return nil
}

// DeleteMessage is a person deleting a message (their own, or any as an
// admin): message_deleted event.
func (s *Server) DeleteMessage(user, channel, ts string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil || ch.get(ts) == nil {
		return fmt.Errorf("fakeslack: DeleteMessage: no message %s in %s", ts, channel)
	}
	m := ch.get(ts)
	prev := s.wireLocked(nil, m)
	m.deleted = true
	if s.botSeesLocked(ch) {
		evTS := s.newTS()
		s.emitEventLocked(map[string]any{
			"type": "message", "subtype": "message_deleted", "hidden": true,
			"channel": ch.ID, "channel_type": ch.channelType(), "ts": evTS, "event_ts": evTS,
			"deleted_ts": m.ts, "previous_message": prev,
		}, ch.ID)
	}
	s.notifyLocked()
	return nil
}

// React adds a person's reaction: reaction_added event.
func (s *Server) React(user, channel, ts, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil || ch.get(ts) == nil {
		return fmt.Errorf("fakeslack: React: no message %s in %s", ts, channel)
	}
	m := ch.get(ts)
	if !m.addReaction(name, user) {
		return fmt.Errorf("fakeslack: React: %s already reacted :%s:", user, name)
	}
	if s.botSeesLocked(ch) {
		s.emitEventLocked(map[string]any{
			"type": "reaction_added", "user": user, "reaction": name, "item_user": m.user,
			"item":     map[string]any{"type": "message", "channel": ch.ID, "ts": m.ts},
			"event_ts": s.newTS(),
		}, ch.ID)
	}
	s.notifyLocked()
	return nil
}

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

// --- response_url ---

func (s *Server) handleResponseURL(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.Trim(r.URL.Path, "/"), "/", 3) // kind/team/id
	var body map[string]any
	var decodeErr error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		decodeErr = json.NewDecoder(r.Body).Decode(&body)
	} else if err := r.ParseForm(); err == nil && r.PostForm.Get("payload") != "" {
		decodeErr = json.Unmarshal([]byte(r.PostForm.Get("payload")), &body)
	} else {
		decodeErr = fmt.Errorf("no JSON body")
	}
	s.mu.Lock()
	var ru *responseURL
	if len(parts) == 3 {
		ru = s.responses[parts[2]]
	}
	status, answer := http.StatusOK, map[string]any{"ok": true}
	switch {
	case ru == nil:
		s.violateLocked("POST to unknown response_url %s", r.URL.Path)
		status, answer = http.StatusNotFound, map[string]any{"ok": false, "error": "invalid_url"}
	case decodeErr != nil:
		s.violateLocked("response_url %s: body is not JSON: %v", r.URL.Path, decodeErr)
		status, answer = http.StatusBadRequest, map[string]any{"ok": false, "error": "invalid_payload"}
	case ru.uses >= 5 || time.Since(ru.created) > 30*time.Minute:
		s.violateLocked("response_url %s used %d times / after %v (allowed: 5 times within 30 minutes)", r.URL.Path, ru.uses+1, time.Since(ru.created).Round(time.Second))
		status, answer = http.StatusNotFound, map[string]any{"ok": false, "error": "used_url"}
	default:
		ru.uses++
		if _, code := s.respondLocked(ru, body); code != "" {
			s.violateLocked("response_url %s answered %s", r.URL.Path, code)
			answer = map[string]any{"ok": false, "error": code}
		}
	}
	s.notifyLocked()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

// respondLocked applies a response_url (or slash-command ack) message:
// delete_original, replace_original, or a new message — ephemeral to the
// user unless response_type is "in_channel".
func (s *Server) respondLocked(ru *responseURL, body map[string]any) (*msg, string) {
	ch := s.channels[ru.channel]
	if ch == nil {
		return nil, "channel_not_found"
	}
	p := params{}
	for _, k := range []string{"text", "blocks", "attachments", "thread_ts"} {
		if v, ok := body[k]; ok && v != nil {
			p[k] = v
		}
	}
	truthy := func(k string) bool { b, _ := body[k].(bool); return b || body[k] == "true" }
	var orig *msg
	if ru.msgTS != "" {
		if ru.ephemeral {
			for _, m := range ch.ephemerals {
				if m.ts == ru.msgTS && !m.deleted {
					orig = m
				}
			}
		} else {
			orig = ch.get(ru.msgTS)
		}
	}
	if truthy("delete_original") {
		if orig == nil {
			return nil, "message_not_found"
		}
		prev := s.wireLocked(nil, orig)
		orig.deleted = true
		if !ru.ephemeral {
			s.echoDeletedLocked(ch, orig, prev)
		}
		return orig, ""
	}
	c, fail := s.parseContentLocked("response_url", p, true)
	if fail != nil {
		return nil, fail.errCode()
	}
	if truthy("replace_original") && orig != nil {
		prev := s.wireLocked(nil, orig)
		orig.text = c.text
		orig.blocks = c.blocks
		if c.hasAttachments {
			orig.attachments = c.attachments
		}
		if !ru.ephemeral {
			orig.editedBy, orig.editedTS = s.Opts.BotUserID, s.newTS()
			s.echoChangedLocked(ch, orig, prev)
		}
		s.wroteLocked("response_url", orig)
		return orig, ""
	}
	m := s.botMsgLocked(ch)
	m.text, m.blocks, m.attachments = c.text, c.blocks, c.attachments
	threadTS := ru.threadTS
	if t := p.str("thread_ts"); t != "" {
		threadTS = t
	}
	if str(body["response_type"]) == "in_channel" {
		s.threadLocked(ch, m, threadTS)
		ch.add(m)
		s.echoNewLocked(ch, m)
		s.wroteLocked("response_url", m)
		return m, ""
	}
	m.ephemeralUser = ru.user
	if root := ch.threadRoot(threadTS); root != nil {
		m.threadTS = root.ts
	}
	ch.ephemerals = append(ch.ephemerals, m)
	s.wroteLocked("response_url", m)
	return m, ""
}
