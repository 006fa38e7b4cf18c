package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// Bounds of a thread read: events asked per relations request (Dendrite
// serves at most 50), events looked at beyond the messages taken (polls,
// votes, what cannot be decrypted), and pages of edits read per message.
const (
	threadPage     = 50
	threadSlack    = 200
	editPage       = 20
	editPagesLimit = 3
)

// ReadThread implements adapters.ThreadReader: the last limit messages of
// the thread rooted at t.Thread, the root counting as one of them, oldest
// first. The thread's events come from the relations endpoint (m.thread,
// newest first, paged), decrypted in an encrypted room; only m.room.message
// events are messages (not reactions, polls or edits themselves), each
// with its latest edit's text (the bot's streamed messages are edited many
// times), read from its m.replace relations by its own sender: Dendrite
// bundles no aggregation. Everyone's messages are read, also those that
// did not mention the bot; the bot's own are marked FromBot. What cannot
// be decrypted is left out.
func (a *Adapter) ReadThread(ctx context.Context, t adapters.ThreadRef, limit int) ([]adapters.Said, error) {
	if limit <= 0 {
		return nil, nil
	}
	select {
	case <-a.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	room, root := id.RoomID(t.Channel), id.EventID(t.Thread)
	out, err := a.threadReplies(ctx, room, root, limit)
	if err != nil {
		return nil, fmt.Errorf("matrix: read thread %s in %s: %w", root, room, err)
	}
	if len(out) == limit {
		return out, nil
	}
	evt, err := a.cli.GetEvent(ctx, room, root)
	if err != nil {
		return nil, fmt.Errorf("matrix: read thread %s in %s: its root: %w", root, room, err)
	}
	evt.RoomID = room
	if s, ok := a.said(ctx, evt, ""); ok {
		out = append([]adapters.Said{s}, out...)
	}
	return out, nil
}

// threadReplies reads the last (at most) limit messages in root's thread,
// oldest first, without the root.
func (a *Adapter) threadReplies(ctx context.Context, room id.RoomID, root id.EventID, limit int) ([]adapters.Said, error) {
	var got []adapters.Said // newest first
	from := ""
	for looked := 0; len(got) < limit && looked < limit+threadSlack; {
		resp, err := a.cli.GetRelations(ctx, room, root, &mautrix.ReqGetRelations{
			RelationType: event.RelThread, Dir: mautrix.DirectionBackward, From: from, Limit: threadPage,
		})
		if err != nil {
			return nil, fmt.Errorf("thread relations: %w", err)
		}
		for _, evt := range resp.Chunk {
			looked++
			evt.RoomID = room
			if s, ok := a.said(ctx, evt, root); ok && len(got) < limit {
				got = append(got, s)
			}
		}
		if len(resp.Chunk) == 0 || resp.NextBatch == "" || resp.NextBatch == from {
			break
		}
		from = resp.NextBatch
	}
	slices.Reverse(got)
	return got, nil
}

// said reads evt as a message of the thread rooted at root ("" for the
// root itself), with its latest edit; ok is false for anything else.
func (a *Adapter) said(ctx context.Context, evt *event.Event, root id.EventID) (adapters.Said, bool) {
	evt, ok := a.readable(ctx, evt)
	if !ok || evt.Type != event.EventMessage {
		return adapters.Said{}, false
	}
	c := evt.Content.AsMessage()
	if root != "" && c.RelatesTo.GetThreadParent() != root {
		return adapters.Said{}, false // not what the server said it was
	}
	if c.RelatesTo.GetReplaceID() != "" {
		return adapters.Said{}, false // an edit: its original shows it
	}
	if latest := a.latestEdit(ctx, evt); latest != nil {
		c = latest
	}
	text := saidText(c)
	if text == "" {
		return adapters.Said{}, false // redacted
	}
	return adapters.Said{
		ID:      evt.ID.String(),
		User:    adapters.User{ID: evt.Sender.String(), Name: evt.Sender.String()},
		FromBot: evt.Sender == a.me,
		Text:    text,
		At:      time.UnixMilli(evt.Timestamp),
	}, true
}

// latestEdit is the new content of the latest edit of evt by its own
// sender (only they may edit it), nil when there is none.
func (a *Adapter) latestEdit(ctx context.Context, evt *event.Event) *event.MessageEventContent {
	from := ""
	for range editPagesLimit {
		resp, err := a.cli.GetRelations(ctx, evt.RoomID, evt.ID, &mautrix.ReqGetRelations{
			RelationType: event.RelReplace, Dir: mautrix.DirectionBackward, From: from, Limit: editPage,
		})
		if err != nil {
			a.log.Debug("matrix: read a message's edits", "event", evt.ID, "err", err)
			return nil
		}
		for _, e := range resp.Chunk { // newest first
			if e.Sender != evt.Sender {
				continue
			}
			e.RoomID = evt.RoomID
			e, ok := a.readable(ctx, e)
			if !ok || e.Type != event.EventMessage {
				continue
			}
			if c := e.Content.AsMessage(); c.NewContent != nil && c.RelatesTo.GetReplaceID() == evt.ID {
				return c.NewContent
			}
		}
		if len(resp.Chunk) == 0 || resp.NextBatch == "" || resp.NextBatch == from {
			return nil
		}
		from = resp.NextBatch
	}
	return nil
}

// readable is evt with its content parsed, decrypted first in an
// encrypted room; ok is false when it cannot be read.
func (a *Adapter) readable(ctx context.Context, evt *event.Event) (*event.Event, bool) {
	if err := evt.Content.ParseRaw(evt.Type); err != nil && !errors.Is(err, event.ErrContentAlreadyParsed) {
		return nil, false // a type without content we read (polls, votes…)
	}
	if evt.Type != event.EventEncrypted {
		return evt, true
	}
	if a.cli.Crypto == nil {
		return nil, false
	}
	dec, err := a.cli.Crypto.Decrypt(ctx, evt)
	if err != nil {
		a.log.Debug("matrix: decrypt a thread's message", "event", evt.ID, "err", err)
		return nil, false
	}
	return dec, true
}

// saidText is what a message says: its body, or for a file its name (and
// caption).
func saidText(c *event.MessageEventContent) string {
	switch c.MsgType {
	case event.MsgImage, event.MsgFile, event.MsgAudio, event.MsgVideo:
		name := c.FileName
		if name == "" {
			name = c.Body
		}
		text := "[file: " + name + "]"
		if c.FileName != "" && c.Body != c.FileName && strings.TrimSpace(c.Body) != "" {
			text = c.Body + "\n" + text
		}
		return text
	}
	return strings.TrimSpace(c.Body)
}
