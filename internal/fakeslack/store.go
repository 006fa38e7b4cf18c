package fakeslack

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"time"
)

// --- IDs and timestamps ---

// newTS hands out a message ts: "<unix seconds>.<6 digits>", strictly
// increasing. s.mu must be held.
func (s *Server) newTS() string {
	now := s.Opts.Clock()
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
