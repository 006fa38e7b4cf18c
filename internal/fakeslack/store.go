package fakeslack

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strings"
	"time"
)

// User is a member of the workspace.
type User struct {
	ID, Name, RealName, Email string
	IsBot, Deleted            bool
	TZ                        string // default "Europe/London"
}

// Channel is a conversation.
type Channel struct {
	ID   string
	Name string // without '#'
	// Type is "channel" (public, the default for C… IDs), "group" (private,
	// default for G… IDs), "im" (D… IDs; set User) or "mpim".
	Type      string
	User      string   // the person of an IM
	Members   []string // people (the bot's membership is NotMember)
	NotMember bool     // the bot is not in the channel (chat.postMessage: not_in_channel)
	Archived  bool     // is_archived
}

// Message is a message as people see it.
type Message struct {
	Channel, TS, ThreadTS string
	User, BotID           string
	Text                  string
	Blocks                json.RawMessage // as stored (block_ids filled in); nil without blocks
	MarkdownText          string          // markdown_text of chat.postMessage/update/streams
	Files                 []File
	Reactions             map[string][]string // name → users, in order
	Streaming             bool                // a chat.startStream message not yet stopped
	Chunks                []json.RawMessage   // non-text stream chunks (task_update, plan_update, blocks)
	Edited                bool
	Subtype               string // thread_broadcast, file_share, tombstone, ...
	Ephemeral             bool   // from Ephemerals
}

// File is an uploaded file.
type File struct {
	ID, Name, Title string
	Size            int    // the length declared to files.getUploadURLExternal
	Content         []byte // the uploaded bytes
	Channel         string // where it was shared ("" if not shared)
	ThreadTS        string
	MessageTS       string
}

type channelState struct {
	Channel
	created    int64
	msgs       map[string]*msg
	order      []string // message ts, ascending
	ephemerals []*msg
}

type reaction struct {
	name  string
	users []string
}

type msg struct {
	channel, ts, threadTS string
	user, botID, appID    string
	username              string
	text                  string
	blocks                json.RawMessage
	markdown              string
	attachments           json.RawMessage
	metadata              json.RawMessage
	files                 []*fileState
	reactions             []*reaction
	editedBy, editedTS    string
	deleted               bool
	subtype               string
	clientMsgID           string
	parentUser            string
	ephemeralUser         string // set for ephemeral messages

	streaming     bool
	streamEnd     string // "", "stopped", "expired", "user"
	streamExpires time.Time
	chunks        []json.RawMessage
}

func (m *msg) isBot() bool { return m.botID != "" }

type fileState struct {
	File
	user     string
	uploaded bool
	created  int64
	mimetype string
	url      string // replaces url_private(_download) in events (SharedFile.URL)
}

type statusState struct {
	status  string
	loading []string
	setAt   time.Time
}

// --- IDs and timestamps ---

// newTS hands out a message ts: "<unix seconds>.<6 digits>", strictly
// increasing. s.mu must be held.
func (s *Server) newTS() string {
	now := time.Now()
	sec, usec := now.Unix(), int64(now.Nanosecond()/1000)
	if sec < s.lastSec || (sec == s.lastSec && usec <= s.lastUsec) {
		sec, usec = s.lastSec, s.lastUsec+1
		if usec >= 1_000_000 {
			sec, usec = sec+1, 0
		}
	}
	s.lastSec, s.lastUsec = sec, usec
	return fmt.Sprintf("%d.%06d", sec, usec)
}

const idChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randID(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for range n {
		b.WriteByte(idChars[mrand.IntN(len(idChars))])
	}
	return b.String()
}

func randAlnum(n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[mrand.IntN(len(chars))]
	}
	return string(b)
}

func randHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (s *Server) triggerID() string {
	return fmt.Sprintf("%d.%d.%s", 4873225519100+mrand.IntN(100000), 7714852943232, randHex(32))
}

// --- users and channels ---

// AddUser adds or replaces a user.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addUserLocked(u)
	s.notifyLocked()
}

func (s *Server) addUserLocked(u User) *User {
	if u.Name == "" {
		u.Name = strings.ToLower(u.ID)
	}
	if u.RealName == "" {
		u.RealName = u.Name
	}
	if u.TZ == "" {
		u.TZ = "Europe/London"
	}
	s.users[u.ID] = &u
	return &u
}

// ensureUserLocked returns the user, creating an unknown one.
func (s *Server) ensureUserLocked(id string) *User {
	if u, ok := s.users[id]; ok {
		return u
	}
	return s.addUserLocked(User{ID: id})
}

// AddChannel adds or replaces a channel (its messages are kept).
func (s *Server) AddChannel(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addChannelLocked(c)
	s.notifyLocked()
}

// ArchiveChannel sets a channel's is_archived (posting: is_archived).
func (s *Server) ArchiveChannel(id string, archived bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.channels[id]; ok {
		ch.Archived = archived
	}
	s.notifyLocked()
}

func (s *Server) addChannelLocked(c Channel) *channelState {
	if c.Type == "" {
		switch {
		case strings.HasPrefix(c.ID, "D"):
			c.Type = "im"
		case strings.HasPrefix(c.ID, "G"):
			c.Type = "group"
		default:
			c.Type = "channel"
		}
	}
	if c.Name == "" && c.Type != "im" {
		c.Name = strings.ToLower(c.ID)
	}
	if old, ok := s.channels[c.ID]; ok {
		old.Channel = c
		return old
	}
	ch := &channelState{Channel: c, created: time.Now().Unix(), msgs: map[string]*msg{}}
	s.channels[c.ID] = ch
	s.chanOrder = append(s.chanOrder, c.ID)
	return ch
}

// ensureChannelLocked returns the channel, creating an unknown one (public,
// bot a member) — user actions can name any channel.
func (s *Server) ensureChannelLocked(id string) *channelState {
	if ch, ok := s.channels[id]; ok {
		return ch
	}
	return s.addChannelLocked(Channel{ID: id})
}

func (ch *channelState) addMember(user string) {
	for _, m := range ch.Members {
		if m == user {
			return
		}
	}
	ch.Members = append(ch.Members, user)
}

func (ch *channelState) isMember(user string) bool {
	if ch.Type == "im" {
		return ch.User == user
	}
	for _, m := range ch.Members {
		if m == user {
			return true
		}
	}
	return false
}

// imChannelLocked returns the bot's IM with user, creating it.
func (s *Server) imChannelLocked(user string) *channelState {
	for _, id := range s.chanOrder {
		ch := s.channels[id]
		if ch.Type == "im" && ch.User == user {
			return ch
		}
	}
	id := "D0" + randID("", 8)
	return s.addChannelLocked(Channel{ID: id, Type: "im", User: user})
}

// channelType is the channel_type of message events.
func (ch *channelState) channelType() string { return ch.Type }

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
