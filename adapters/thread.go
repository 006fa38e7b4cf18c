package adapters

import "strings"

// ThreadRef addresses one conversation: a Slack thread, a Matrix thread, a
// console thread. Platform names the adapter ("slack", "matrix", "console").
// It is comparable: use it as a map key as it is.
type ThreadRef struct {
	Platform string
	// Channel is the Slack channel id (or team/channel), the Matrix room id,
	// "console" for the console.
	Channel string
	// Thread is the thread root: Slack thread_ts, Matrix root event id, the
	// console thread's name.
	Thread string
}

// ThreadKey is a thread's stable identity as stored: "platform/channel/thread".
// Only ThreadRef.Key makes one and only ThreadKey.Ref reads one back, so the
// format lives in this file alone.
type ThreadKey string

// Key is the thread's stable identity in the store.
func (t ThreadRef) Key() ThreadKey { return ThreadKey(t.Platform + "/" + t.Channel + "/" + t.Thread) }

// ChannelKey identifies the thread's channel across threads.
func (t ThreadRef) ChannelKey() string { return t.Platform + "/" + t.Channel }

func (t ThreadRef) String() string { return string(t.Key()) }

// Ref reads the thread back from its key. The platform is everything up to
// the first slash and the thread everything after the last (a Slack
// channel may hold a slash: team/channel).
func (k ThreadKey) Ref() (ThreadRef, bool) {
	p, rest, ok := strings.Cut(string(k), "/")
	if !ok {
		return ThreadRef{}, false
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return ThreadRef{}, false
	}
	return ThreadRef{Platform: p, Channel: rest[:i], Thread: rest[i+1:]}, true
}

// MessageRef addresses one message the bot posted, for edits.
type MessageRef struct {
	Thread ThreadRef
	ID     string
}

// String is the form a message ref is stored in (a prompt's message, so
// that it can be updated after a restart); ParseMessageRef reads it back.
func (r MessageRef) String() string { return string(r.Thread.Key()) + "#" + r.ID }

// ParseMessageRef reads a MessageRef.String back.
func ParseMessageRef(s string) (MessageRef, bool) {
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		return MessageRef{}, false
	}
	t, ok := ThreadKey(s[:i]).Ref()
	return MessageRef{Thread: t, ID: s[i+1:]}, ok
}
