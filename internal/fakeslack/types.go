package fakeslack

import (
	"encoding/json"
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
	Deleted               bool   // from Posted: deleted since
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
