package matrix

import (
	"context"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

func (a *Adapter) register(s *mautrix.DefaultSyncer) {
	s.OnEventType(event.StateMember, a.onMember)
	s.OnEventType(event.StateEncryption, a.onEncryption)
	s.OnEventType(event.EventMessage, a.onMessage)
	s.OnEventType(event.EventReaction, a.onReaction)
	s.OnEventType(event.EventUnstablePollResponse, a.onPollResponse)
	s.OnEventType(eventStablePollResponse, a.onPollResponse)
	s.OnEventType(event.EventEncrypted, a.onEncrypted)
}

// dropHistory removes timeline events the bot must not act on: everything
// of the very first sync (since == "": old messages), and in a room it has
// just joined, what came before its join. State events stay: the state and
// crypto stores need them. Invites stay too.
func (a *Adapter) dropHistory(ctx context.Context, resp *mautrix.RespSync, since string) bool {
	for roomID, room := range resp.Rooms.Join {
		evts := room.Timeline.Events
		cut := -1
		if since == "" {
			cut = len(evts) - 1
		} else {
			for i, e := range evts {
				if a.isOwnJoin(e) {
					cut = i
				}
			}
		}
		if cut < 0 {
			if room.Timeline.Limited && since != "" {
				// More happened while the bot was away than one sync holds.
				room.Timeline.Events = a.backfill(ctx, roomID, room.Timeline.PrevBatch, since, evts)
			}
			continue
		}
		kept := evts[:0:0]
		for i, e := range evts {
			if i > cut || e.StateKey != nil {
				kept = append(kept, e)
			}
		}
		if dropped := len(evts) - len(kept); dropped > 0 {
			a.log.Debug("matrix: history not acted on", "room", roomID, "events", dropped, "first_sync", since == "")
		}
		room.Timeline.Events = kept
	}
	if since == "" {
		for _, room := range resp.Rooms.Leave {
			room.Timeline.Events = nil
		}
	}
	return true
}

// Backfill bounds: pages of /messages fetched for one room's gap, and the
// clock skew allowed between the homeserver and the bot.
const (
	backfillPages = 20
	backfillSkew  = 5 * time.Minute
)

// backfill fetches what a limited sync timeline left out: the events from
// the position the bot synced from (since) to the timeline's start, oldest
// first, followed by the timeline. Events older than that position's save
// time (with some skew) are not taken, so a server that ignores "to" cannot
// make the bot act on old history; ids already in the timeline are skipped.
func (a *Adapter) backfill(ctx context.Context, room id.RoomID, from, since string, timeline []*event.Event) []*event.Event {
	seen := make(map[id.EventID]bool, len(timeline))
	for _, e := range timeline {
		seen[e.ID] = true
	}
	oldest := a.cur.savedAt().Add(-backfillSkew).UnixMilli()
	var got []*event.Event // newest first
	for page := 0; page < backfillPages && from != ""; page++ {
		resp, err := a.cli.Messages(ctx, room, from, since, mautrix.DirectionBackward, nil, 100)
		if err != nil {
			a.log.Warn("matrix: fetch the messages a sync left out", "room", room, "err", err)
			break
		}
		done := len(resp.Chunk) == 0 || resp.End == "" || resp.End == from
		for _, e := range resp.Chunk {
			if e.Timestamp < oldest {
				done = true
				break
			}
			if !seen[e.ID] {
				seen[e.ID] = true
				e.RoomID = room
				got = append(got, e)
			}
		}
		if done {
			break
		}
		from = resp.End
		if page == backfillPages-1 {
			a.log.Warn("matrix: a gap too long to fetch whole; older messages are skipped", "room", room, "fetched", len(got))
		}
	}
	if len(got) > 0 {
		a.log.Info("matrix: fetched messages a sync left out", "room", room, "events", len(got))
	}
	slices.Reverse(got)
	return append(got, timeline...)
}

// isOwnJoin: the bot's membership became join (not a profile change).
func (a *Adapter) isOwnJoin(e *event.Event) bool {
	if e.Type != event.StateMember || e.StateKey == nil || *e.StateKey != a.me.String() {
		return false
	}
	if m, _ := e.Content.Raw["membership"].(string); m != string(event.MembershipJoin) {
		return false
	}
	if e.Unsigned.PrevContent == nil {
		return true
	}
	prev, _ := e.Unsigned.PrevContent.Raw["membership"].(string)
	return prev != string(event.MembershipJoin)
}

// onMember joins rooms the bot is invited to by someone allowed, and
// rejects other invites.
func (a *Adapter) onMember(ctx context.Context, evt *event.Event) {
	a.mu.Lock()
	delete(a.direct, evt.RoomID) // who is in the room changed
	a.mu.Unlock()
	if evt.GetStateKey() != a.me.String() || evt.Mautrix.EventSource&event.SourceInvite == 0 {
		return
	}
	if evt.Content.AsMember().Membership != event.MembershipInvite {
		return
	}
	if !a.cfg.MayInvite(evt.RoomID.String(), evt.Sender.String()) {
		a.log.Warn("matrix: invite refused: the inviter may not use the bot in that room", "room", evt.RoomID, "inviter", evt.Sender)
		if _, err := a.cli.LeaveRoom(ctx, evt.RoomID, &mautrix.ReqLeave{Reason: "invited by someone who may not use this bot"}); err != nil {
			a.log.Warn("matrix: reject invite", "room", evt.RoomID, "err", err)
		}
		return
	}
	if _, err := a.cli.JoinRoomByID(ctx, evt.RoomID); err != nil {
		a.log.Warn("matrix: join room", "room", evt.RoomID, "err", err)
		return
	}
	a.log.Info("matrix: joined room", "room", evt.RoomID, "inviter", evt.Sender)
}

// onMessage turns a message into an event for the bot: a mention starts a
// thread rooted at it; a message in a thread is input for that thread's
// session (the bot ignores threads it has none in).
func (a *Adapter) onMessage(ctx context.Context, evt *event.Event) {
	if evt.Sender == a.me {
		return
	}
	c := evt.Content.AsMessage()
	if c.RelatesTo != nil && c.RelatesTo.GetReplaceID() != "" {
		return // an edit of an earlier message: that one was the input
	}
	root := c.RelatesTo.GetThreadParent()
	if root != "" {
		// The bot's next message in the thread falls back to replying to it.
		a.seenInThread(threadRef(evt.RoomID, root), evt.ID)
	}
	if c.MsgType == event.MsgNotice {
		return // bots talk in notices; never answer one (no loops)
	}
	if root == "" {
		root = evt.ID
	}
	_, name := a.identity()
	// In a room of two (a direct chat) every message is for the bot.
	mentioned := a.mentions(c, name) || (root == evt.ID && a.isDirect(ctx, evt.RoomID))
	msg := &adapters.Incoming{ID: evt.ID.String(), Mentioned: mentioned}
	switch c.MsgType {
	case event.MsgText, event.MsgEmote:
		msg.Text = a.stripMention(c, name)
	case event.MsgImage, event.MsgFile, event.MsgAudio, event.MsgVideo:
		// Only described: the bot fetches it once it has checked the
		// sender and found the thread (files.go).
		msg.Files = []adapters.File{a.attachment(c)}
		if c.FileName != "" && c.Body != c.FileName {
			msg.Text = c.Body // a caption
		}
	default:
		return
	}
	a.deliverEvent(ctx, evt.ID, adapters.Event{Thread: threadRef(evt.RoomID, root), User: adapters.User{ID: evt.Sender.String(), Name: evt.Sender.String()},
		Message: msg, Unverified: a.unverified(ctx, evt)})
}

// mentions reports whether a message addresses the bot: m.mentions when the
// client sent it (Element always does), else the MXID or a pill in the
// body, for older clients.
func (a *Adapter) mentions(c *event.MessageEventContent, name string) bool {
	if c.Mentions != nil {
		return c.Mentions.Has(a.me)
	}
	if strings.Contains(c.Body, a.me.String()) || strings.Contains(c.FormattedBody, a.me.URI().MatrixToURL()) {
		return true
	}
	return name != "" && strings.HasPrefix(strings.ToLower(c.Body), strings.ToLower(name)+":")
}

var pillRE = regexp.MustCompile(`(?i)<a\s+href="https://matrix\.to/#/([^"]+)"[^>]*>(.*?)</a>`)

// stripMention removes the bot's mention from the plain body: the MXID, or
// the display text of the pill pointing at the bot.
func (a *Adapter) stripMention(c *event.MessageEventContent, name string) string {
	text := c.Body
	if c.RelatesTo != nil && c.RelatesTo.GetNonFallbackReplyTo() != "" {
		text = stripReplyFallback(text)
	}
	names := []string{a.me.String()}
	for _, m := range pillRE.FindAllStringSubmatch(c.FormattedBody, -1) {
		if u, err := url.PathUnescape(m[1]); err == nil && strings.EqualFold(u, a.me.String()) {
			names = append(names, html.UnescapeString(stripTags(m[2])))
		}
	}
	if name != "" {
		names = append(names, name)
	}
	trimmed := strings.TrimSpace(text)
	for _, n := range names {
		if n == "" || len(trimmed) < len(n) || !strings.EqualFold(trimmed[:len(n)], n) {
			continue
		}
		// "Name: …" or "@bot:server …" addresses the bot; "Name is …" does not.
		if rest := trimmed[len(n):]; n == a.me.String() || strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, ",") {
			trimmed = strings.TrimLeft(rest, ":, ")
			break
		}
	}
	return strings.TrimSpace(strings.ReplaceAll(trimmed, a.me.String(), ""))
}

// stripReplyFallback drops the "> <@user> quoted" lines old clients put
// before a reply.
func stripReplyFallback(s string) string {
	lines := strings.Split(s, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "> ") {
		i++
	}
	if i > 0 && i < len(lines) && lines[i] == "" {
		i++
	}
	return strings.Join(lines[i:], "\n")
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

func stripTags(s string) string { return tagRE.ReplaceAllString(s, "") }

// onReaction: a reaction on one of the bot's prompts is a click. The bot's
// own pre-added reactions come back through sync too and are skipped.
func (a *Adapter) onReaction(ctx context.Context, evt *event.Event) {
	if evt.Sender == a.me {
		return
	}
	rel := evt.Content.AsReaction().RelatesTo
	p := a.promptIn(evt.RoomID, rel.GetAnnotationID())
	if p == nil {
		return
	}
	click, ok := p.reactionClick(cleanKey(rel.GetAnnotationKey()), rel.GetAnnotationID())
	if !ok {
		return
	}
	click.ID = evt.ID.String()
	a.deliverEvent(ctx, evt.ID, adapters.Event{Thread: p.thread, User: adapters.User{ID: evt.Sender.String(), Name: evt.Sender.String()},
		Click: &click, Unverified: a.unverified(ctx, evt)})
}

// onPollResponse: a vote in one of the bot's polls answers its question.
// Votes are events of their own; the bot checks who may answer.
func (a *Adapter) onPollResponse(ctx context.Context, evt *event.Event) {
	if evt.Sender == a.me {
		return
	}
	var pollID id.EventID
	var answers []string
	if c, ok := evt.Content.Parsed.(*event.PollResponseEventContent); ok {
		pollID, answers = c.RelatesTo.GetReferenceID(), c.Response.Answers
	} else {
		if rel, ok := evt.Content.Raw["m.relates_to"].(map[string]any); ok {
			s, _ := rel["event_id"].(string)
			pollID = id.EventID(s)
		}
		for _, key := range []string{"org.matrix.msc3381.poll.response", "m.poll.response"} {
			if r, ok := evt.Content.Raw[key].(map[string]any); ok {
				for _, v := range asList(r["answers"]) {
					answers = append(answers, v)
				}
			}
		}
		for _, v := range asList(evt.Content.Raw["m.selections"]) {
			answers = append(answers, v)
		}
	}
	p := a.promptIn(evt.RoomID, pollID)
	if p == nil {
		return
	}
	click, ok := p.voteClick(pollID, answers)
	if !ok {
		return
	}
	click.ID = evt.ID.String()
	a.deliverEvent(ctx, evt.ID, adapters.Event{Thread: p.thread, User: adapters.User{ID: evt.Sender.String(), Name: evt.Sender.String()},
		Click: &click, Unverified: a.unverified(ctx, evt)})
}

// promptIn is the prompt (or poll) target of a click sent in room, nil if
// there is none there. A relation may name any event id, also one of
// another room: a click counts only in the room of its prompt, or a member
// of any room the bot is in could decide in every other.
func (a *Adapter) promptIn(room id.RoomID, target id.EventID) *promptMsg {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.prompts[target]
	if p == nil || p.thread.Channel != room.String() {
		return nil
	}
	return p
}

func asList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// onEncrypted handles encrypted events when the bot has no crypto machine
// (built without goolm): it says once per room that it cannot read them.
// With a machine, mautrix decrypts and re-dispatches them instead.
func (a *Adapter) onEncrypted(ctx context.Context, evt *event.Event) {
	a.mu.Lock()
	enc := a.encrypted
	a.mu.Unlock()
	if enc || evt.Sender == a.me {
		return
	}
	a.reportUndecryptable(ctx, evt, "room:"+evt.RoomID.String(),
		"This room is end-to-end encrypted, and this claudeops was built without encryption support (the goolm build tag), so it cannot read messages here.")
}

// reportUndecryptable tells the room, once per key, that a message could
// not be read, in the message's thread when its relation is in clear.
func (a *Adapter) reportUndecryptable(ctx context.Context, evt *event.Event, key, text string) {
	a.mu.Lock()
	seen := a.reported[key]
	a.reported[key] = true
	a.mu.Unlock()
	if seen {
		return
	}
	a.log.Warn("matrix: cannot read an encrypted message", "room", evt.RoomID, "sender", evt.Sender, "event", evt.ID)
	root := evt.ID
	if c, ok := evt.Content.Parsed.(*event.EncryptedEventContent); ok && c.RelatesTo != nil {
		if p := c.RelatesTo.GetThreadParent(); p != "" {
			root = p
		}
	}
	if _, err := a.Post(ctx, threadRef(evt.RoomID, root), adapters.Message{Kind: adapters.KindNotice, Text: text, Error: true}); err != nil {
		a.log.Warn("matrix: report undecryptable message", "err", err)
	}
}

// isDirect reports whether the bot and one person are all a room's members,
// cached until the membership changes.
func (a *Adapter) isDirect(ctx context.Context, room id.RoomID) bool {
	a.mu.Lock()
	d, ok := a.direct[room]
	a.mu.Unlock()
	if ok {
		return d
	}
	resp, err := a.cli.JoinedMembers(ctx, room)
	if err != nil {
		a.log.Debug("matrix: list members", "room", room, "err", err)
		return false
	}
	d = len(resp.Joined) == 2
	a.mu.Lock()
	a.direct[room] = d
	a.mu.Unlock()
	return d
}
