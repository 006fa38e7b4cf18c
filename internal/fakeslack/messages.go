package fakeslack

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// --- messages ---

func (ch *channelState) add(m *msg) {
	ch.msgs[m.ts] = m
	i := sort.SearchStrings(ch.order, m.ts)
	ch.order = append(ch.order, "")
	copy(ch.order[i+1:], ch.order[i:])
	ch.order[i] = m.ts
}

// get returns a live (not deleted) message.
func (ch *channelState) get(ts string) *msg {
	m := ch.msgs[ts]
	if m == nil || m.deleted {
		return nil
	}
	return m
}

// replies returns the live replies of parentTS in order.
func (ch *channelState) replies(parentTS string) []*msg {
	var out []*msg
	for _, ts := range ch.order {
		m := ch.msgs[ts]
		if m.deleted || m.ts == parentTS || m.threadTS != parentTS {
			continue
		}
		out = append(out, m)
	}
	return out
}

// threadRoot resolves a thread_ts argument: the parent of a reply, or the
// message itself. nil if there is no such live message.
func (ch *channelState) threadRoot(ts string) *msg {
	m := ch.get(ts)
	if m == nil {
		return nil
	}
	if m.threadTS != "" && m.threadTS != m.ts {
		if p := ch.get(m.threadTS); p != nil {
			return p
		}
		return nil
	}
	return m
}

// liveSync: the stream state is updated lazily: a stream past its lifetime
// is no longer streaming.
func (m *msg) expireStream(now time.Time) {
	if m.streaming && !m.streamExpires.IsZero() && now.After(m.streamExpires) {
		m.streaming = false
		m.streamEnd = "expired"
	}
}

func (s *Server) toMessage(m *msg) Message {
	m.expireStream(time.Now())
	out := Message{
		Channel:      m.channel,
		TS:           m.ts,
		ThreadTS:     m.threadTS,
		User:         m.user,
		BotID:        m.botID,
		Text:         m.text,
		Blocks:       cloneRaw(m.blocks),
		MarkdownText: m.markdown,
		Streaming:    m.streaming,
		Edited:       m.editedTS != "",
		Subtype:      m.subtype,
		Ephemeral:    m.ephemeralUser != "",
	}
	for _, c := range m.chunks {
		out.Chunks = append(out.Chunks, cloneRaw(c))
	}
	for _, f := range m.files {
		ff := f.File
		ff.Content = append([]byte(nil), f.Content...)
		out.Files = append(out.Files, ff)
	}
	if len(m.reactions) > 0 {
		out.Reactions = map[string][]string{}
		for _, r := range m.reactions {
			out.Reactions[r.name] = append([]string(nil), r.users...)
		}
	}
	return out
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

// Thread returns the parent and the replies of a thread in order, edits
// applied, deleted messages left out. threadTS may be any message of the
// thread. Empty if there is no such thread.
func (s *Server) Thread(channel, threadTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil {
		return nil
	}
	parentTS := threadTS
	if m := ch.msgs[threadTS]; m != nil && m.threadTS != "" {
		parentTS = m.threadTS
	}
	var out []Message
	if p := ch.get(parentTS); p != nil {
		out = append(out, s.toMessage(p))
	}
	for _, r := range ch.replies(parentTS) {
		out = append(out, s.toMessage(r))
	}
	return out
}

// Messages returns the channel's top-level messages (and thread broadcasts)
// in order, deleted ones left out.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil {
		return nil
	}
	var out []Message
	for _, ts := range ch.order {
		m := ch.msgs[ts]
		if m.deleted || (m.threadTS != "" && m.threadTS != m.ts && m.subtype != "thread_broadcast") {
			continue
		}
		out = append(out, s.toMessage(m))
	}
	return out
}

// Posted returns every message ever posted in the channel for all its
// members to see, in order: top-level messages and thread replies alike,
// deleted ones included (Deleted set): a message posted and then deleted
// was still shown, and sent to every client as an event. Ephemerals are
// not in it (see Ephemerals).
func (s *Server) Posted(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil {
		return nil
	}
	var out []Message
	for _, ts := range ch.order {
		m := ch.msgs[ts]
		mm := s.toMessage(m)
		mm.Deleted = m.deleted
		out = append(out, mm)
	}
	return out
}

// Message returns one live message.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil {
		return Message{}, false
	}
	m := ch.get(ts)
	if m == nil {
		return Message{}, false
	}
	return s.toMessage(m), true
}

// Ephemerals returns the ephemeral messages user sees in channel, in order
// (replaced ones as replaced, deleted ones left out).
func (s *Server) Ephemerals(channel, user string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil {
		return nil
	}
	var out []Message
	for _, m := range ch.ephemerals {
		if m.deleted || m.ephemeralUser != user {
			continue
		}
		out = append(out, s.toMessage(m))
	}
	return out
}

// Status returns the assistant thread status set with
// assistant.threads.setStatus, "" once cleared (by the bot's next reply in
// the thread, an empty status, or StatusTimeout).
func (s *Server) Status(channel, threadTS string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statuses[channel+"/"+threadTS]
	if st == nil || time.Since(st.setAt) > s.Opts.StatusTimeout {
		return ""
	}
	return st.status
}

// FileByID returns an uploaded file.
func (s *Server) FileByID(id string) (File, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[id]
	if f == nil {
		return File{}, false
	}
	ff := f.File
	ff.Content = append([]byte(nil), f.Content...)
	return ff, true
}

// VisibleText is everything readable in the message: text (or markdown),
// and every text of its blocks, joined with newlines.
func (m Message) VisibleText() string {
	var parts []string
	if m.Text != "" {
		parts = append(parts, m.Text)
	} else if m.MarkdownText != "" {
		parts = append(parts, m.MarkdownText)
	}
	if len(m.Blocks) > 0 {
		var blocks any
		if json.Unmarshal(m.Blocks, &blocks) == nil {
			collectTexts(blocks, &parts)
		}
	}
	return strings.Join(parts, "\n")
}

func collectTexts(v any, out *[]string) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collectTexts(e, out)
		}
	case map[string]any:
		if t, ok := x["text"].(string); ok {
			*out = append(*out, t)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k != "text" || !isString(x[k]) {
				collectTexts(x[k], out)
			}
		}
	}
}

func isString(v any) bool { _, ok := v.(string); return ok }

// ActionIDs lists the action_ids of the interactive elements in the
// message's blocks (buttons, selects, checkboxes, ...), in order.
func (m Message) ActionIDs() []string {
	var blocks []any
	if json.Unmarshal(m.Blocks, &blocks) != nil {
		return nil
	}
	var ids []string
	for _, el := range interactiveElements(blocks) {
		ids = append(ids, el.actionID)
	}
	return ids
}

// Forget drops the workspace's history: every channel's messages, the
// calls and envelopes recorded, thread statuses, block states, downloads.
// Users, channels, rate budgets and faults stay. A long test calls it to
// measure the app's memory rather than the fake's.
func (s *Server) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.channels {
		ch.msgs, ch.order, ch.ephemerals = map[string]*msg{}, nil, nil
	}
	s.calls, s.downloads = nil, nil
	s.pending, s.envelopes = nil, nil
	s.envByID = map[string]*envelope{}
	s.statuses = map[string]*statusState{}
	s.responses = map[string]*responseURL{}
	s.states = map[string]map[string]map[string]any{}
	s.notifyLocked()
}
