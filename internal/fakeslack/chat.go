package fakeslack

import (
	"encoding/json"
	"strings"
	"time"
)

// --- message content ---

type content struct {
	text, markdown                  string
	hasText, hasMarkdown, hasBlocks bool
	blocks                          json.RawMessage // normalized; nil if none/empty
	attachments                     json.RawMessage
	hasAttachments                  bool
	truncated                       bool
	metadata                        json.RawMessage
}

// parseContentLocked validates text / blocks / markdown_text / attachments
// as Slack does. With truncate, text past MaxText is truncated
// (chat.postMessage); without, text past MaxUpdateText is msg_too_long.
func (s *Server) parseContentLocked(method string, p params, truncate bool) (content, *result) {
	var c content
	fail := func(r result) (content, *result) { return c, &r }

	c.text, c.hasText = p.str("text"), p.str("text") != ""
	c.markdown, c.hasMarkdown = p.str("markdown_text"), p.has("markdown_text")

	var blockList []any
	if p.has("blocks") && p.str("blocks") != "" {
		v, err := p.jsonArg("blocks")
		arr, isArr := v.([]any)
		if err != nil || !isArr {
			return fail(errRes("invalid_blocks_format"))
		}
		blockList = arr
		c.hasBlocks = true
	}
	if c.hasMarkdown && (c.hasText || len(blockList) > 0) {
		return fail(errRes("markdown_text_conflict"))
	}
	if c.hasMarkdown && runes(c.markdown) > MaxMarkdownText {
		return fail(errRes("msg_too_long"))
	}
	if c.hasBlocks {
		chk := validateBlocks(blockList, "/blocks")
		if len(chk.errs) > 0 {
			return fail(errMsgs("invalid_blocks", chk.errs...))
		}
		if chk.totalText > MaxBlocksTotalText {
			return fail(errRes("msg_blocks_too_long"))
		}
		if len(blockList) > 0 {
			c.blocks = normalizeBlocks(blockList)
		}
	}
	if p.has("attachments") && p.str("attachments") != "" {
		v, err := p.jsonArg("attachments")
		arr, isArr := v.([]any)
		if err != nil || !isArr {
			return fail(errRes("invalid_attachments"))
		}
		if len(arr) > MaxAttachments {
			return fail(errRes("too_many_attachments"))
		}
		if len(arr) > 0 {
			c.attachments, _ = json.Marshal(arr)
			c.hasAttachments = true
		}
	}
	if p.has("metadata") && p.str("metadata") != "" {
		v, err := p.jsonArg("metadata")
		if _, isObj := v.(map[string]any); err != nil || !isObj {
			return fail(errRes("invalid_metadata_format"))
		}
		c.metadata, _ = json.Marshal(v)
	}
	if runes(c.text) > MaxText && truncate {
		s.violateLocked("%s: text of %d characters truncated to %d", method, runes(c.text), MaxText)
		c.text, c.truncated = truncateRunes(c.text, MaxText), true
	} else if !truncate && runes(c.text) > MaxUpdateText {
		return fail(errRes("msg_too_long"))
	}
	if !c.hasText && c.blocks == nil && !c.hasAttachments && (!c.hasMarkdown || c.markdown == "") {
		return fail(errRes("no_text"))
	}
	if c.hasMarkdown {
		c.text = c.markdown
	}
	return c, nil
}

func (s *Server) botMsgLocked(ch *channelState) *msg {
	return &msg{channel: ch.ID, ts: s.newTS(), user: s.Opts.BotUserID, botID: s.Opts.BotID, appID: s.Opts.AppID}
}

// threadLocked attaches m to the thread named by threadTS: the parent of a
// reply's ts; unthreaded if the parent doesn't exist (or was deleted).
func (s *Server) threadLocked(ch *channelState, m *msg, threadTS string) {
	if threadTS == "" {
		return
	}
	root := ch.threadRoot(threadTS)
	if root == nil {
		s.logf("thread_ts %s in %s: no such message, posted unthreaded", threadTS, ch.ID)
		return
	}
	root.threadTS = root.ts
	m.threadTS = root.ts
	m.parentUser = root.user
	delete(s.statuses, ch.ID+"/"+root.ts) // the bot's reply clears the thread status
}

func (s *Server) apiPostMessage(p params) result {
	s.noUnfurlLocked("chat.postMessage", p)
	ch, code := s.postChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	c, fail := s.parseContentLocked("chat.postMessage", p, true)
	if fail != nil {
		return *fail
	}
	m := s.botMsgLocked(ch)
	m.text, m.markdown, m.blocks, m.attachments, m.metadata = c.text, c.markdown, c.blocks, c.attachments, c.metadata
	m.username = p.str("username")
	s.threadLocked(ch, m, p.str("thread_ts"))
	if m.threadTS != "" && p.boolean("reply_broadcast") {
		m.subtype = "thread_broadcast"
	}
	ch.add(m)
	s.echoNewLocked(ch, m)
	s.wroteLocked("chat.postMessage", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts, "message": s.wireLocked(ch, m)})
}

// ownMessageLocked finds a message of the bot for update/delete/streams.
func (s *Server) ownMessageLocked(p params, tsArg string, notOwned string) (*channelState, *msg, string) {
	ch := s.channelLocked(p.str("channel"))
	if ch == nil || (ch.NotMember && ch.Type != "channel") {
		if u := p.str("channel"); strings.HasPrefix(u, "U") {
			ch = s.imChannelLocked(u)
		} else {
			return nil, nil, "channel_not_found"
		}
	}
	m := ch.get(p.str(tsArg))
	if m == nil {
		return ch, nil, "message_not_found"
	}
	if m.botID != s.Opts.BotID {
		return ch, m, notOwned
	}
	return ch, m, ""
}

func (s *Server) apiUpdate(p params) result {
	ch, m, code := s.ownMessageLocked(p, "ts", "cant_update_message")
	if code != "" {
		return errRes(code)
	}
	if ch.Archived {
		return errRes("is_inactive")
	}
	m.expireStream(time.Now())
	if m.streaming {
		return errRes("streaming_state_conflict")
	}
	c, fail := s.parseContentLocked("chat.update", p, false)
	if fail != nil {
		return *fail
	}
	prev := s.wireLocked(ch, m)
	switch {
	case c.hasMarkdown:
		m.markdown, m.text, m.blocks = c.markdown, c.markdown, nil
	default:
		if c.hasText {
			m.text = c.text
			m.markdown = ""
		}
		// Without blocks the old blocks stay (chat.update); blocks=[] clears them.
		if c.hasBlocks {
			m.blocks = c.blocks
		}
	}
	if c.hasAttachments {
		m.attachments = c.attachments
	}
	if c.metadata != nil {
		m.metadata = c.metadata
	}
	if !c.hasBlocks {
		m.editedBy, m.editedTS = s.Opts.BotUserID, s.newTS()
	}
	s.echoChangedLocked(ch, m, prev)
	s.wroteLocked("chat.update", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts, "text": m.text, "message": s.wireLocked(ch, m)})
}

func (s *Server) apiDelete(p params) result {
	ch, m, code := s.ownMessageLocked(p, "ts", "cant_delete_message")
	if code != "" {
		return errRes(code)
	}
	prev := s.wireLocked(ch, m)
	m.deleted = true
	s.echoDeletedLocked(ch, m, prev)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts})
}

func (s *Server) apiPostEphemeral(p params) result {
	ch, code := s.postChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	user := p.str("user")
	if _, ok := s.users[user]; !ok {
		return errRes("user_not_found")
	}
	if !ch.isMember(user) {
		return errRes("user_not_in_channel")
	}
	c, fail := s.parseContentLocked("chat.postEphemeral", p, false)
	if fail != nil {
		return *fail
	}
	m := s.botMsgLocked(ch)
	m.text, m.markdown, m.blocks, m.attachments = c.text, c.markdown, c.blocks, c.attachments
	m.ephemeralUser = user
	if tts := p.str("thread_ts"); tts != "" {
		if root := ch.threadRoot(tts); root != nil {
			m.threadTS = root.ts
		}
	}
	ch.ephemerals = append(ch.ephemerals, m)
	s.wroteLocked("chat.postEphemeral", m)
	return okRes(map[string]any{"message_ts": m.ts})
}
