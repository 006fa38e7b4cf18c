package settings

import (
	"fmt"
	"strings"
	"time"
)

// Level is how wide a scope is.
type Level int

// The levels, widest first.
const (
	LevelBot Level = iota
	LevelPlatform
	LevelWorkspace
	LevelChannel
	LevelThread
)

var levelNames = [...]string{"bot", "platform", "workspace", "channel", "thread"}

func (l Level) String() string { return levelNames[l] }

// Scope is where a value is given: the bot (Key ""), a platform ("slack"),
// a workspace ("slack/T0123", "matrix/example.org"), a channel (its channel
// key, "slack/C0123") or a thread (its thread key).
type Scope struct {
	Level Level
	Key   string
}

// Bot is the widest scope.
var Bot = Scope{Level: LevelBot}

func (s Scope) String() string {
	if s.Level == LevelBot {
		return "bot"
	}
	return s.Level.String() + " " + s.Key
}

// Where is the place a setting is asked about: a thread of a channel of a
// platform. Thread may be empty (a channel's settings).
type Where struct {
	Platform, Channel, Thread string
}

// ChannelKey is the bot's key of the channel: "platform/channel".
func (w Where) ChannelKey() string { return w.Platform + "/" + w.Channel }

// Scopes are the scopes that apply at w, widest first.
func (w Where) Scopes() []Scope {
	out := []Scope{Bot, {LevelPlatform, w.Platform}}
	if ws := w.workspace(); ws != "" {
		out = append(out, Scope{LevelWorkspace, w.Platform + "/" + ws})
	}
	out = append(out, Scope{LevelChannel, w.ChannelKey()})
	if w.Thread != "" {
		out = append(out, Scope{LevelThread, w.ChannelKey() + "/" + w.Thread})
	}
	return out
}

// workspace is the workspace the channel belongs to, "" when the channel
// does not say: a Slack channel spelled "T0123/C0456" names its team (a
// single-workspace bot's channels are plain ids, and the platform scope
// is their workspace), a Matrix room id its server.
func (w Where) workspace() string {
	switch w.Platform {
	case "slack":
		if team, _, ok := strings.Cut(w.Channel, "/"); ok {
			return team
		}
	case "matrix":
		if _, server, ok := strings.Cut(w.Channel, ":"); ok {
			return server
		}
	}
	return ""
}

// Origin is where a value was given.
type Origin int

const (
	// FromDefault: nobody gave it; the built-in default.
	FromDefault Origin = iota
	// FromConfig: the bot's configuration (its environment).
	FromConfig
	// FromChat: set in chat by an admin, stored by the bot.
	FromChat
	// FromFile: the settings file.
	FromFile
)

// Source says where the value that applies came from.
type Source struct {
	Scope  Scope
	Origin Origin
	// Var is the configuration variable (FromConfig).
	Var string
	// Line is the line in the settings file (FromFile).
	Line int
	// By and At: who set it in chat and when (FromChat).
	By string
	At time.Time
	// Label names the scope for people ("#payments"), where the file gave
	// it one.
	Label string
}

func (s Source) String() string {
	where := s.Scope.String()
	if s.Label != "" {
		where += " (" + s.Label + ")"
	}
	switch s.Origin {
	case FromConfig:
		return fmt.Sprintf("%s, from the configuration (%s)", where, s.Var)
	case FromFile:
		return fmt.Sprintf("%s, from the settings file, line %d", where, s.Line)
	case FromChat:
		return fmt.Sprintf("%s, set in chat by %s on %s", where, s.By, s.At.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return "the default"
}
