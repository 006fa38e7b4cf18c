package fakeslack

import (
	"encoding/json"
	"fmt"
	"time"
)

// --- streams ---

func (s *Server) streamChunksLocked(m *msg, p params) *result {
	if !p.has("chunks") || p.str("chunks") == "" {
		return nil
	}
	v, err := p.jsonArg("chunks")
	arr, ok := v.([]any)
	if err != nil || !ok {
		r := errRes("invalid_chunks")
		return &r
	}
	var texts []string
	var others []json.RawMessage
	for i, c := range arr {
		cm, ok := c.(map[string]any)
		if !ok {
			r := errMsgs("invalid_chunks", fmt.Sprintf("[ERROR] must provide an object [json-pointer:/chunks/%d]", i))
			return &r
		}
		switch cm["type"] {
		case "markdown_text":
			t := str(cm["text"])
			if runes(t) > MaxMarkdownText {
				r := errRes("msg_too_long")
				return &r
			}
			texts = append(texts, t)
		case "task_update":
			if str(cm["id"]) == "" || str(cm["title"]) == "" {
				r := errMsgs("invalid_chunks", fmt.Sprintf("[ERROR] missing required field: id/title [json-pointer:/chunks/%d]", i))
				return &r
			}
			b, _ := json.Marshal(cm)
			others = append(others, b)
		case "plan_update":
			b, _ := json.Marshal(cm)
			others = append(others, b)
		case "blocks":
			bl, _ := cm["blocks"].([]any)
			if len(bl) > MaxBlocks {
				r := errMsgs("invalid_chunks", fmt.Sprintf("[ERROR] no more than 50 items allowed [json-pointer:/chunks/%d/blocks]", i))
				return &r
			}
			b, _ := json.Marshal(cm)
			others = append(others, b)
		default:
			r := errMsgs("invalid_chunks", fmt.Sprintf("[ERROR] must be a valid enum value [json-pointer:/chunks/%d/type]", i))
			return &r
		}
	}
	for _, t := range texts {
		m.markdown += t
	}
	m.text = m.markdown
	m.chunks = append(m.chunks, others...)
	return nil
}

func (s *Server) apiStartStream(p params) result {
	if !s.Opts.Streaming {
		return errRes("feature_not_enabled")
	}
	ch, code := s.postChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	if p.str("thread_ts") == "" {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: thread_ts")
	}
	if ch.Type != "im" {
		if p.str("recipient_user_id") == "" {
			return errRes("missing_recipient_user_id")
		}
		if p.str("recipient_team_id") == "" {
			return errRes("missing_recipient_team_id")
		}
	}
	md := p.str("markdown_text")
	if runes(md) > MaxMarkdownText {
		return errRes("msg_too_long")
	}
	m := s.botMsgLocked(ch)
	m.markdown, m.text = md, md
	if r := s.streamChunksLocked(m, p); r != nil {
		return *r
	}
	m.streaming, m.streamExpires = true, time.Now().Add(s.Opts.StreamLifetime)
	s.threadLocked(ch, m, p.str("thread_ts"))
	ch.add(m)
	s.echoNewLocked(ch, m)
	s.wroteLocked("chat.startStream", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts})
}

func (s *Server) streamingMsgLocked(p params) (*channelState, *msg, *result) {
	if !s.Opts.Streaming {
		r := errRes("feature_not_enabled")
		return nil, nil, &r
	}
	ch, m, code := s.ownMessageLocked(p, "ts", "message_not_owned_by_app")
	if code != "" {
		r := errRes(code)
		return nil, nil, &r
	}
	m.expireStream(time.Now())
	if !m.streaming {
		r := errRes("message_not_in_streaming_state")
		if m.streamEnd == "user" {
			r = errRes("stopped_by_user")
		}
		return nil, nil, &r
	}
	if runes(p.str("markdown_text")) > MaxMarkdownText {
		r := errRes("msg_too_long")
		return nil, nil, &r
	}
	return ch, m, nil
}

func (s *Server) apiAppendStream(p params) result {
	ch, m, fail := s.streamingMsgLocked(p)
	if fail != nil {
		return *fail
	}
	if p.str("markdown_text") == "" && p.str("chunks") == "" {
		return errRes("no_text")
	}
	m.markdown += p.str("markdown_text")
	m.text = m.markdown
	if r := s.streamChunksLocked(m, p); r != nil {
		return *r
	}
	s.wroteLocked("chat.appendStream", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts})
}

func (s *Server) apiStopStream(p params) result {
	ch, m, fail := s.streamingMsgLocked(p)
	if fail != nil {
		return *fail
	}
	var blocks json.RawMessage
	if p.str("blocks") != "" {
		v, err := p.jsonArg("blocks")
		arr, ok := v.([]any)
		if err != nil || !ok {
			return errRes("invalid_blocks_format")
		}
		chk := validateBlocks(arr, "/blocks")
		if len(chk.errs) > 0 {
			return errMsgs("invalid_blocks", chk.errs...)
		}
		if len(arr) > 0 {
			blocks = normalizeBlocks(arr)
		}
	}
	prev := s.wireLocked(ch, m)
	m.markdown += p.str("markdown_text")
	m.text = m.markdown
	if r := s.streamChunksLocked(m, p); r != nil {
		return *r
	}
	if blocks != nil {
		m.blocks = blocks
	}
	if p.str("metadata") != "" {
		if v, err := p.jsonArg("metadata"); err == nil {
			m.metadata, _ = json.Marshal(v)
		}
	}
	m.streaming, m.streamEnd = false, "stopped"
	s.echoChangedLocked(ch, m, prev)
	s.wroteLocked("chat.stopStream", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts, "message": s.wireLocked(ch, m)})
}

// StopStreamByUser is the user pressing Stop on a streaming message: later
// appends answer stopped_by_user.
func (s *Server) StopStreamByUser(channel, ts string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil || ch.get(ts) == nil || !ch.get(ts).streaming {
		return fmt.Errorf("fakeslack: no streaming message %s in %s", ts, channel)
	}
	m := ch.get(ts)
	m.streaming, m.streamEnd = false, "user"
	s.notifyLocked()
	return nil
}
