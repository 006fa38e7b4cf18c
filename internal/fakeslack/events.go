package fakeslack

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

func (s *Server) botProfile() map[string]any {
	return map[string]any{
		"id": s.Opts.BotID, "app_id": s.Opts.AppID, "name": s.Opts.BotName, "deleted": false,
		"team_id": s.Opts.TeamID, "user_id": s.Opts.BotUserID,
		"icons":   map[string]any{"image_36": "https://a.slack-edge.com/80588/img/plugins/app/bot_36.png"},
		"updated": 1795300000,
	}
}

// wireLocked is a message as Slack's Web API returns it (chat.postMessage's
// "message", conversations.replies, interaction payloads).
func (s *Server) wireLocked(ch *channelState, m *msg) map[string]any {
	m.expireStream(time.Now())
	w := map[string]any{"type": "message", "text": m.text, "ts": m.ts}
	if m.subtype != "" {
		w["subtype"] = m.subtype
	}
	if m.user != "" {
		w["user"] = m.user
	}
	if m.isBot() {
		w["bot_id"] = m.botID
		w["app_id"] = m.appID
		w["bot_profile"] = s.botProfile()
	}
	if m.username != "" {
		w["username"] = m.username
	}
	if m.clientMsgID != "" {
		w["client_msg_id"] = m.clientMsgID
	}
	if m.threadTS != "" {
		w["thread_ts"] = m.threadTS
		if m.threadTS != m.ts && m.parentUser != "" {
			w["parent_user_id"] = m.parentUser
		}
	}
	w["team"] = s.Opts.TeamID
	if m.blocks != nil {
		w["blocks"] = json.RawMessage(m.blocks)
	}
	if m.attachments != nil {
		w["attachments"] = json.RawMessage(m.attachments)
	}
	if m.metadata != nil {
		w["metadata"] = json.RawMessage(m.metadata)
	}
	if m.editedTS != "" {
		w["edited"] = map[string]any{"user": m.editedBy, "ts": m.editedTS}
	}
	if len(m.files) > 0 {
		var files []map[string]any
		for _, f := range m.files {
			files = append(files, s.wireFile(f))
		}
		w["files"] = files
		w["upload"] = true
		w["display_as_bot"] = false
	}
	if len(m.reactions) > 0 {
		var rs []map[string]any
		for _, r := range m.reactions {
			rs = append(rs, map[string]any{"name": r.name, "users": append([]string(nil), r.users...), "count": len(r.users)})
		}
		w["reactions"] = rs
	}
	if m.threadTS == m.ts && ch != nil {
		replies := ch.replies(m.ts)
		var users []string
		seen := map[string]bool{}
		latest := ""
		for _, r := range replies {
			if !seen[r.user] {
				seen[r.user] = true
				users = append(users, r.user)
			}
			latest = r.ts
		}
		w["reply_count"] = len(replies)
		w["reply_users_count"] = len(users)
		if users != nil {
			w["reply_users"] = users
		}
		if latest != "" {
			w["latest_reply"] = latest
		}
		w["is_locked"] = false
		w["subscribed"] = false
	}
	return w
}

func (s *Server) wireFile(f *fileState) map[string]any {
	ext := ""
	if i := strings.LastIndex(f.Name, "."); i >= 0 {
		ext = f.Name[i+1:]
	}
	priv := s.URL + "/files-pri/" + s.Opts.TeamID + "-" + f.ID + "/" + f.Name
	download := priv + "?download=1"
	if f.url != "" {
		priv, download = f.url, f.url
	}
	mime := f.mimetype
	if mime == "" {
		mime = "text/plain"
	}
	return map[string]any{
		"id": f.ID, "created": f.created, "timestamp": f.created, "name": f.Name, "title": f.Title,
		"mimetype": mime, "filetype": ext, "pretty_type": strings.ToUpper(ext), "user": f.user,
		"user_team": s.Opts.TeamID, "editable": false, "size": len(f.Content), "mode": "hosted",
		"is_external": false, "external_type": "", "is_public": true, "public_url_shared": false,
		"url_private": priv, "url_private_download": download,
		"permalink": "https://" + s.Opts.TeamDomain + ".slack.com/files/" + f.user + "/" + f.ID + "/" + f.Name,
	}
}

// eventCallbackLocked wraps an inner event in Slack's outer event_callback
// (fixture socket_events_api_app_mention.json).
func (s *Server) eventCallbackLocked(inner map[string]any, channel string) (json.RawMessage, string) {
	eventID := randID("Ev0", 9)
	typ, _ := inner["type"].(string)
	ctx, _ := json.Marshal(map[string]string{"et": typ, "tid": s.Opts.TeamID, "aid": s.Opts.AppID, "cid": channel})
	outer := map[string]any{
		"token":                 s.Opts.VerificationToken,
		"team_id":               s.Opts.TeamID,
		"context_team_id":       s.Opts.TeamID,
		"context_enterprise_id": nil,
		"api_app_id":            s.Opts.AppID,
		"event":                 inner,
		"type":                  "event_callback",
		"event_id":              eventID,
		"event_time":            time.Now().Unix(),
		"authorizations": []map[string]any{{
			"enterprise_id": nil, "team_id": s.Opts.TeamID, "user_id": s.Opts.BotUserID,
			"is_bot": true, "is_enterprise_install": false,
		}},
		"is_ext_shared_channel": false,
		"event_context":         "4-" + base64.RawURLEncoding.EncodeToString(ctx),
	}
	b, _ := json.Marshal(outer)
	return b, eventID
}

// emitEventLocked delivers an Events API event (Socket Mode or HTTP).
func (s *Server) emitEventLocked(inner map[string]any, channel string) string {
	payload, eventID := s.eventCallbackLocked(inner, channel)
	typ, _ := inner["type"].(string)
	if st, _ := inner["subtype"].(string); st != "" {
		typ += "/" + st
	}
	s.deliverLocked(&envelope{Envelope: Envelope{Type: "events_api", EventID: eventID, EventType: typ, Payload: payload}})
	return eventID
}

// botSeesLocked: the app receives message events of channels the bot is in.
func (s *Server) botSeesLocked(ch *channelState) bool {
	return ch.Type == "im" || !ch.NotMember
}

// echoNewLocked: the bot's own post comes back as a message event with
// bot_id and bot_profile and no subtype (events_api_bot_message_echo.json).
func (s *Server) echoNewLocked(ch *channelState, m *msg) {
	if s.Opts.NoBotEcho || !s.botSeesLocked(ch) {
		return
	}
	ev := s.wireLocked(nil, m)
	if len(m.files) > 0 {
		ev["subtype"] = "file_share"
	}
	ev["channel"], ev["event_ts"], ev["channel_type"] = ch.ID, m.ts, ch.channelType()
	s.emitEventLocked(ev, ch.ID)
}

// echoChangedLocked: message_changed (events_api_message_changed.json).
func (s *Server) echoChangedLocked(ch *channelState, m *msg, prev map[string]any) {
	if (m.isBot() && s.Opts.NoBotEcho) || !s.botSeesLocked(ch) {
		return
	}
	s.emitChangedLocked(ch, m, prev)
}

func (s *Server) emitChangedLocked(ch *channelState, m *msg, prev map[string]any) {
	ts := s.newTS()
	cur := s.wireLocked(nil, m)
	delete(prev, "bot_profile")
	delete(cur, "bot_profile")
	s.emitEventLocked(map[string]any{
		"type": "message", "subtype": "message_changed", "hidden": true,
		"channel": ch.ID, "channel_type": ch.channelType(), "ts": ts, "event_ts": ts,
		"message": cur, "previous_message": prev,
	}, ch.ID)
}

// echoDeletedLocked: message_deleted.
func (s *Server) echoDeletedLocked(ch *channelState, m *msg, prev map[string]any) {
	if (m.isBot() && s.Opts.NoBotEcho) || !s.botSeesLocked(ch) {
		return
	}
	ts := s.newTS()
	delete(prev, "bot_profile")
	s.emitEventLocked(map[string]any{
		"type": "message", "subtype": "message_deleted", "hidden": true,
		"channel": ch.ID, "channel_type": ch.channelType(), "ts": ts, "event_ts": ts,
		"deleted_ts": m.ts, "previous_message": prev,
	}, ch.ID)
}

// --- user text ---

var entityRe = regexp.MustCompile(`<[@#!][^<>]*>|<https?://[^<>]*>|<mailto:[^<>]*>`)

// escapeUserText turns what a person typed into message text: &, < and >
// are escaped except in <@U…>, <#C…>, <!here>, <url|text> entities.
func escapeUserText(text string) string {
	var b strings.Builder
	last := 0
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	for _, loc := range entityRe.FindAllStringIndex(text, -1) {
		b.WriteString(esc.Replace(text[last:loc[0]]))
		b.WriteString(text[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(esc.Replace(text[last:]))
	return b.String()
}

// richTextBlocks builds the rich_text block the Slack client attaches to a
// person's message (fixture: socket_events_api_app_mention.json).
func richTextBlocks(typed string) json.RawMessage {
	var els []map[string]any
	text := func(t string) {
		if t != "" {
			els = append(els, map[string]any{"type": "text", "text": t})
		}
	}
	last := 0
	for _, loc := range entityRe.FindAllStringIndex(typed, -1) {
		text(typed[last:loc[0]])
		ent := typed[loc[0]+1 : loc[1]-1]
		label := ""
		if i := strings.Index(ent, "|"); i >= 0 {
			ent, label = ent[:i], ent[i+1:]
		}
		switch {
		case strings.HasPrefix(ent, "@"):
			els = append(els, map[string]any{"type": "user", "user_id": ent[1:]})
		case strings.HasPrefix(ent, "#"):
			els = append(els, map[string]any{"type": "channel", "channel_id": ent[1:]})
		case strings.HasPrefix(ent, "!"):
			els = append(els, map[string]any{"type": "broadcast", "range": strings.TrimPrefix(ent, "!")})
		default:
			l := map[string]any{"type": "link", "url": ent}
			if label != "" {
				l["text"] = label
			}
			els = append(els, l)
		}
		last = loc[1]
	}
	text(typed[last:])
	if els == nil {
		els = []map[string]any{}
	}
	b, _ := json.Marshal([]map[string]any{{
		"type":     "rich_text",
		"block_id": randAlnum(5),
		"elements": []map[string]any{{"type": "rich_text_section", "elements": els}},
	}})
	return b
}
