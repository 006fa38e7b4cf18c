package fakeslack

import (
	"fmt"
	"strings"
)

// --- an app that is away: events Slack gives up on, redeliveries ---

// giveUpLocked drops an event that found no socket: never delivered.
func (s *Server) giveUpLocked(e *envelope) {
	e.GivenUp = true
	s.logf("event %s (%s) given up: no socket for %v", e.EventID, e.EventType, s.Opts.GiveUpAfter)
	s.notifyLocked()
}

// GiveUp ends Slack's retries of the events_api events waiting for a
// socket now: they are dropped undelivered (Envelope.GivenUp), as after
// Slack's last retry, and only conversations.history and
// conversations.replies still show their messages. Interactive and slash
// envelopes keep waiting. It returns how many events it dropped.
func (s *Server) GiveUp() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keep []*envelope
	n := 0
	for _, e := range s.pending {
		if e.Type != "events_api" {
			keep = append(keep, e)
			continue
		}
		s.giveUpLocked(e)
		n++
	}
	s.pending = keep
	return n
}

// SetOffline makes Socket Mode unavailable (off=true) or available again:
// while it is off, every open socket is dropped and a new one is refused
// at the WebSocket upgrade (HTTP 503, its ticket spent), as in an outage
// or a cut network path; slack-go keeps trying with backoff. The Web API
// keeps working. Events wait for a socket meanwhile (see GiveUp).
func (s *Server) SetOffline(off bool) {
	s.mu.Lock()
	s.offline = off
	s.notifyLocked()
	s.mu.Unlock()
	if off {
		s.DropSockets()
	}
}

// Redeliver sends the events_api event eventID again as Slack's retry of
// it: the same payload and event_id, retry_attempt one more than its last
// delivery, retry_reason "timeout" (for an HTTP app "http_timeout" in
// X-Slack-Retry-Reason). It is an error if no such event was sent.
func (s *Server) Redeliver(eventID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last *envelope
	for _, e := range s.envelopes {
		if e.Type == "events_api" && e.EventID == eventID {
			last = e
		}
	}
	if last == nil {
		return fmt.Errorf("fakeslack: Redeliver: no event %s", eventID)
	}
	s.deliverLocked(&envelope{Envelope: Envelope{
		Type: last.Type, EventID: last.EventID, EventType: last.EventType, Payload: cloneRaw(last.Payload),
		RetryAttempt: last.RetryAttempt + 1, RetryReason: "timeout",
	}})
	return nil
}

// EventsOf returns the event_ids of the events_api events sent for the
// message at ts in channel (its message and app_mention events), first
// deliveries only, in order.
func (s *Server) EventsOf(channel, ts string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	seen := map[string]bool{}
	needle := `"ts":"` + ts + `"`
	for _, e := range s.envelopes {
		if e.Type != "events_api" || seen[e.EventID] || !strings.Contains(string(e.Payload), needle) ||
			!strings.Contains(string(e.Payload), `"channel":"`+channel+`"`) {
			continue
		}
		if t := e.EventType; t != "message" && t != "app_mention" && t != "message/file_share" && t != "message/thread_broadcast" {
			continue
		}
		seen[e.EventID] = true
		ids = append(ids, e.EventID)
	}
	return ids
}

// OtherBot is another app's bot user in the workspace.
type OtherBot struct {
	BotID, UserID, AppID, Name string
}

// BotPost is another app posting with its bot token, at top level
// (threadTS "") or in the thread of threadTS: a message with its bot_id,
// bot_profile and bot user, no subtype, and its message event (an
// app_mention too when the text mentions our bot), as Slack sends for any
// app's chat.postMessage.
func (s *Server) BotPost(b OtherBot, channel, threadTS, text string) (ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.ensureChannelLocked(channel)
	s.addUserLocked(User{ID: b.UserID, Name: b.Name, IsBot: true})
	m := &msg{channel: ch.ID, ts: s.newTS(), user: b.UserID, botID: b.BotID, appID: b.AppID, text: escapeUserText(text)}
	if threadTS != "" {
		root := ch.threadRoot(threadTS)
		if root == nil {
			s.t.Errorf("fakeslack: BotPost: no message %s in %s", threadTS, channel)
			return ""
		}
		root.threadTS = root.ts
		m.threadTS, m.parentUser = root.ts, root.user
	}
	ch.add(m)
	if s.botSeesLocked(ch) {
		ev := s.wireLocked(nil, m)
		ev["bot_profile"] = map[string]any{"id": b.BotID, "app_id": b.AppID, "name": b.Name, "user_id": b.UserID, "team_id": s.Opts.TeamID}
		ev["channel"], ev["event_ts"], ev["channel_type"] = ch.ID, m.ts, ch.channelType()
		s.emitEventLocked(ev, ch.ID)
		if strings.Contains(m.text, "<@"+s.Opts.BotUserID+">") {
			mention := map[string]any{"type": "app_mention", "user": b.UserID, "bot_id": b.BotID, "text": m.text,
				"ts": m.ts, "channel": ch.ID, "event_ts": m.ts, "team": s.Opts.TeamID}
			if m.threadTS != "" {
				mention["thread_ts"] = m.threadTS
			}
			s.emitEventLocked(mention, ch.ID)
		}
	}
	s.notifyLocked()
	return m.ts
}
