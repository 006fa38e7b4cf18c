package slack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
)

// threadReadMax bounds the messages one ReadThread looks at: Slack pages a
// thread oldest first, so its last messages come after all the others.
const threadReadMax = 10000

// ReadThread implements adapters.ThreadReader with conversations.replies,
// paged under the method's budget: the last limit messages of the thread
// rooted at t.Thread (the root counts as one of them), oldest first.
// Everyone's messages are read, also those that did not mention the bot,
// and those of other bots; the bot's own are marked FromBot. Edits show as
// they are now; deleted messages, joins and other events are left out. A
// message Slack files under another thread (t.Thread naming a reply) is
// never returned. Users are named by their id, as in events.
func (a *Adapter) ReadThread(ctx context.Context, t adapters.ThreadRef, limit int) ([]adapters.Said, error) {
	if limit <= 0 {
		return nil, nil
	}
	select {
	case <-a.ready: // the bot's own ids are known
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	botUser, botID, _, _ := a.identity()
	var last []adapters.Said // the last limit read so far
	looked, cursor := 0, ""
	for {
		var page []slack.Message
		var hasMore bool
		var next string
		err := a.call(ctx, "conversations.replies", "", func(ctx context.Context) error {
			var err error
			page, hasMore, next, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: t.Channel, Timestamp: t.Thread, Limit: a.catchUpPage(), Cursor: cursor,
			})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("slack: read thread %s/%s: conversations.replies: %w", t.Channel, t.Thread, err)
		}
		if looked += len(page); looked > threadReadMax {
			return nil, fmt.Errorf("slack: read thread %s/%s: longer than %d messages", t.Channel, t.Thread, threadReadMax)
		}
		for _, m := range page {
			if s, ok := said(m, t.Thread, botUser, botID); ok {
				last = append(last, s)
				if len(last) > limit {
					last = last[1:]
				}
			}
		}
		if !hasMore || next == "" {
			return last, nil
		}
		cursor = next
	}
}

// said is m as a message of the thread rooted at root: ok is false for one
// not to show (not of that thread, deleted, a join, empty).
func said(m slack.Message, root, botUser, botID string) (adapters.Said, bool) {
	if m.Timestamp != root && m.ThreadTimestamp != root {
		return adapters.Said{}, false
	}
	switch m.SubType {
	case "", "thread_broadcast", "file_share", "bot_message", "me_message":
	default:
		return adapters.Said{}, false // tombstones, joins, channel events
	}
	if m.Hidden {
		return adapters.Said{}, false
	}
	text := messageText(m)
	for _, f := range m.Files {
		text = strings.TrimSpace(text + "\n[file: " + f.Name + "]")
	}
	if text == "" {
		return adapters.Said{}, false // a control (Stop) or an empty post
	}
	user := m.User
	if user == "" {
		user = m.BotID
	}
	name := user
	if m.SubType == "bot_message" && m.Username != "" {
		name = m.Username
	}
	var at time.Time
	if ts, ok := parseTS(m.Timestamp); ok {
		at = time.Unix(ts.sec, ts.usec*1000)
	}
	return adapters.Said{
		ID:      m.Timestamp,
		User:    adapters.User{ID: user, Name: name},
		FromBot: (botUser != "" && m.User == botUser) || (botID != "" && m.BotID == botID),
		Text:    text,
		At:      at,
	}, true
}

// messageText is what m says. The bot's own posts carry their whole text
// in markdown and section blocks, and only a cut fallback in text; a
// person's message has it all in text, with &, < and > escaped.
func messageText(m slack.Message) string {
	var parts []string
	for _, b := range m.Blocks.BlockSet {
		switch b := b.(type) {
		case *slack.MarkdownBlock:
			parts = append(parts, b.Text)
		case *slack.SectionBlock:
			if b.Text != nil {
				parts = append(parts, b.Text.Text)
			}
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(m.Text)
	}
	return strings.TrimSpace(text)
}
