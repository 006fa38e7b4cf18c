package slack

import (
	"context"
	"strings"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
)

// inbound is a message as both ways of receiving one carry it: a live
// message or app_mention event, or a message read back from
// conversations.replies or conversations.history by catch-up. Both go
// through toEvent, so that one set of rules decides what reaches the bot.
type inbound struct {
	user, text, channel, ts, threadTS, subtype, botID string
	// channelType is the event's channel_type ("im" for a DM); read-back
	// messages carry none, catch-up derives it from the channel id.
	channelType string
	files       []slack.File
	appMention  bool
}

// fromMessage is a message read back from the Web API, in channel.
func fromMessage(channel string, m slack.Message) inbound {
	in := inbound{
		user: m.User, text: m.Text, channel: channel, ts: m.Timestamp, threadTS: m.ThreadTimestamp,
		subtype: m.SubType, botID: m.BotID, files: m.Files,
	}
	if in.threadTS == in.ts {
		in.threadTS = "" // a thread's parent is a top-level message
	}
	if m.Hidden && in.subtype == "" {
		in.subtype = "hidden"
	}
	if strings.HasPrefix(channel, "D") {
		in.channelType = "im"
	}
	return in
}

// toEvent applies the rules of what the bot takes: a person's message (not
// the bot's own, nor another bot's unless AllowBots), not an edit, a
// deletion or a join; in a channel only a mention of the bot or a reply in
// a thread (the bot drops replies in threads it has no session in); in a
// DM everything. team is the workspace of the message's identity (the
// dedupe key). ok is false when the message is not for the bot.
func (a *Adapter) toEvent(in inbound, team string) (ev adapters.Event, ok bool) {
	botUser, botID, authTeam, _ := a.identity()
	if team == "" {
		team = authTeam
	}
	mentioned := in.appMention
	if !in.appMention {
		switch in.subtype {
		case "", "file_share", "thread_broadcast":
		default:
			return adapters.Event{}, false // edits, deletes, joins: not prompts
		}
		mentioned = in.channelType == "im" || strings.Contains(in.text, "<@"+botUser+">")
		if !mentioned && in.threadTS == "" {
			return adapters.Event{}, false // a channel message not for us
		}
	}
	if in.user == botUser || (in.botID != "" && (in.botID == botID || !a.cfg.AllowBots)) || in.user == "" {
		return adapters.Event{}, false
	}
	root := in.threadTS
	if root == "" {
		root = in.ts
	}
	return adapters.Event{
		Thread: adapters.ThreadRef{Platform: Platform, Channel: in.channel, Thread: root},
		User:   adapters.User{ID: in.user, Name: in.user},
		Message: &adapters.Incoming{
			ID:        messageID(team, in.channel, in.ts),
			Text:      stripMention(in.text, botUser),
			Mentioned: mentioned,
			// Only described here: the bot fetches them once it has
			// checked the sender (see files.go).
			Files: a.attachments(in.files),
		},
	}, true
}

// messageID is a message's identity, the bot's dedupe key: one post is one
// message whichever way it arrives, however often.
func messageID(team, channel, ts string) string { return team + "/" + channel + "/" + ts }

// deliverInbound hands in to the bot if it is for the bot. The error is
// non-nil only when the bot could not record it.
func (a *Adapter) deliverInbound(ctx context.Context, in inbound, team string) error {
	ev, ok := a.toEvent(in, team)
	if !ok {
		return nil
	}
	return a.handOver(ctx, ev)
}

// handOver delivers a message event to the bot, remembering who wrote in
// the thread (a stream is addressed to them).
func (a *Adapter) handOver(ctx context.Context, ev adapters.Event) error {
	_, _, _, deliver := a.identity()
	a.asker.Put(threadKey(ev.Thread.Channel, ev.Thread.Thread), ev.User.ID)
	if err := deliver(ctx, ev); err != nil {
		return err
	}
	a.noteHanded(ev)
	return nil
}
