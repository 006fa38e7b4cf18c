package fakeslack

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// --- conversations.replies and conversations.history ---
//
// The shapes of Slack's method references: "messages" (history newest
// first; replies oldest first, the thread's parent first on the first page
// and on no later one), "has_more", "response_metadata": {"next_cursor"}
// ("" on the last page), history's "pin_count". oldest and latest bound
// the messages by ts, exclusively unless inclusive is set; a cursor is
// opaque to the client (ours, like Slack's, is base64 of "next_ts:<ts>")
// and one that does not decode is invalid_cursor. limit defaults to 100
// (history) or 1000 (replies) and is capped at 999 and 1000.
//
// Errors: channel_not_found (no such channel, or a private one the bot is
// not in), not_in_channel (a public channel the bot is not in),
// thread_not_found (replies: no such message, or a deleted one with no
// replies), invalid_arguments (replies without ts), invalid_ts_oldest and
// invalid_ts_latest (not a ts), invalid_cursor. Both methods are Tier 3
// under Strict (ratelimit.go).

// tsKey is a ts as numbers, for ordering ("1795321455.130183" → 1795321455,
// 130183; "0" and whole seconds allowed).
type tsKey struct{ sec, usec int64 }

func (a tsKey) less(b tsKey) bool {
	return a.sec < b.sec || (a.sec == b.sec && a.usec < b.usec)
}

func parseTSKey(ts string) (tsKey, bool) {
	secStr, usecStr, frac := strings.Cut(ts, ".")
	sec, err := strconv.ParseInt(secStr, 10, 64)
	if err != nil || sec < 0 {
		return tsKey{}, false
	}
	var usec int64
	if frac {
		if usecStr == "" || len(usecStr) > 6 {
			return tsKey{}, false
		}
		usec, err = strconv.ParseInt(usecStr+strings.Repeat("0", 6-len(usecStr)), 10, 64)
		if err != nil || usec < 0 {
			return tsKey{}, false
		}
	}
	return tsKey{sec, usec}, true
}

// tsRange is the oldest/latest/inclusive arguments of a call.
type tsRange struct {
	oldest, latest       tsKey
	hasOldest, hasLatest bool
	inclusive            bool
}

func parseRange(p params) (tsRange, string) {
	r := tsRange{inclusive: p.boolean("inclusive")}
	var ok bool
	if o := p.str("oldest"); o != "" {
		if r.oldest, ok = parseTSKey(o); !ok {
			return r, "invalid_ts_oldest"
		}
		r.hasOldest = true
	}
	if l := p.str("latest"); l != "" {
		if r.latest, ok = parseTSKey(l); !ok {
			return r, "invalid_ts_latest"
		}
		r.hasLatest = true
	}
	return r, ""
}

func (r tsRange) holds(ts string) bool {
	k, ok := parseTSKey(ts)
	if !ok {
		return false
	}
	if r.hasOldest && (k.less(r.oldest) || (!r.inclusive && k == r.oldest)) {
		return false
	}
	if r.hasLatest && (r.latest.less(k) || (!r.inclusive && k == r.latest)) {
		return false
	}
	return true
}

// encodeCursor and decodeCursor make and read a page cursor: the ts of the
// first message of the next page.
func encodeCursor(ts string) string {
	return base64.StdEncoding.EncodeToString([]byte("next_ts:" + ts))
}

// cursorArg reads the request's cursor: nil without one; ok is false for
// one this server did not hand out.
func cursorArg(p params) (from *tsKey, ok bool) {
	c := p.str("cursor")
	if c == "" {
		return nil, true
	}
	k, ok := decodeCursor(c)
	if !ok {
		return nil, false
	}
	return &k, true
}

func decodeCursor(c string) (tsKey, bool) {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return tsKey{}, false
	}
	ts, ok := strings.CutPrefix(string(b), "next_ts:")
	if !ok {
		return tsKey{}, false
	}
	return parseTSKey(ts)
}

func limitArg(p params, def, most int) int {
	l, err := strconv.Atoi(p.str("limit"))
	if err != nil || l <= 0 {
		return def
	}
	return min(l, most)
}

// historyReadLocked resolves the channel a history method reads.
func (s *Server) historyReadLocked(p params) (*channelState, string) {
	ch, code := s.readChannelLocked(p.str("channel"))
	if code != "" {
		return nil, code
	}
	if ch.NotMember {
		return nil, "not_in_channel"
	}
	return ch, ""
}

func (s *Server) apiConversationsHistory(p params) result {
	ch, code := s.historyReadLocked(p)
	if code != "" {
		return errRes(code)
	}
	rng, code := parseRange(p)
	if code != "" {
		return errRes(code)
	}
	from, ok := cursorArg(p)
	if !ok {
		return errRes("invalid_cursor")
	}
	limit := limitArg(p, 100, 999)
	var picked []*msg
	next := ""
	for i := len(ch.order) - 1; i >= 0; i-- {
		m := ch.msgs[ch.order[i]]
		if m.deleted || (m.threadTS != "" && m.threadTS != m.ts && m.subtype != "thread_broadcast") || !rng.holds(m.ts) {
			continue
		}
		if k, _ := parseTSKey(m.ts); from != nil && from.less(k) {
			continue // newer than the page asked for
		}
		if len(picked) == limit {
			next = encodeCursor(m.ts)
			break
		}
		picked = append(picked, m)
	}
	r := s.messagesPage(ch, picked, next)
	r.body["pin_count"] = 0
	return r
}

func (s *Server) apiConversationsReplies(p params) result {
	ch, code := s.historyReadLocked(p)
	if code != "" {
		return errRes(code)
	}
	ts := p.str("ts")
	if ts == "" {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: ts")
	}
	rng, code := parseRange(p)
	if code != "" {
		return errRes(code)
	}
	parentTS := ts
	if m := ch.msgs[ts]; m != nil && m.threadTS != "" {
		parentTS = m.threadTS
	}
	parent := ch.msgs[parentTS]
	replies := ch.replies(parentTS)
	if parent == nil || (parent.deleted && len(replies) == 0) {
		return errRes("thread_not_found")
	}
	limit := limitArg(p, 1000, 1000)
	var picked []*msg
	from, ok := cursorArg(p)
	if !ok {
		return errRes("invalid_cursor")
	}
	if from == nil {
		picked = append(picked, parent) // the first page starts with the parent
	}
	next := ""
	for _, r := range replies {
		if !rng.holds(r.ts) {
			continue
		}
		if k, _ := parseTSKey(r.ts); from != nil && k.less(*from) {
			continue // older than the page asked for
		}
		if len(picked) == limit {
			next = encodeCursor(r.ts)
			break
		}
		picked = append(picked, r)
	}
	return s.messagesPage(ch, picked, next)
}

// messagesPage is the answer of a history method: the messages as the Web
// API shows them (a deleted parent as its tombstone).
func (s *Server) messagesPage(ch *channelState, picked []*msg, next string) result {
	msgs := make([]map[string]any, 0, len(picked))
	for _, m := range picked {
		if m.deleted {
			msgs = append(msgs, map[string]any{
				"type": "message", "subtype": "tombstone", "text": "This message was deleted.", "user": "USLACKBOT",
				"hidden": true, "ts": m.ts, "thread_ts": m.ts, "reply_count": len(ch.replies(m.ts)),
			})
			continue
		}
		msgs = append(msgs, s.wireLocked(ch, m))
	}
	return okRes(map[string]any{
		"messages": msgs, "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next},
	})
}
