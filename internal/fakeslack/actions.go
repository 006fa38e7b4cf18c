package fakeslack

import (
	"encoding/json"
	"fmt"
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
