package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
)

// Reading back what Slack holds: conversations.replies (a thread, oldest
// first) and conversations.history (a channel's top-level messages, newest
// first), page by page through next_cursor, each call under the method's
// Tier 3 budget (limiter.go). want says which messages are for the bot (as
// events). A read takes at most max of those that count and looks at no
// more than readFactor×max messages (the bot's own answers, chatter...);
// more is true when it stopped with the range not read to its end.

// defaultCatchUpPage is the limit asked of each call: Slack suggests no
// more than 200, and a thread's backlog usually fits one page.
const defaultCatchUpPage = 100

// readFactor bounds the messages a read looks at, as a multiple of the
// messages it may take.
const readFactor = 4

// wantFunc turns a message read back into the event the bot is to get: ok
// is false for a message not to hand over; counts is false for one that
// does not count toward a read's max (the bot refuses it at once, so it
// neither waits in a thread's mailbox nor crowds out others' messages).
type wantFunc func(slack.Message) (ev adapters.Event, ok, counts bool)

// reading counts what a read looked at and took.
type reading struct {
	max, looked, counted int
	evs                  []adapters.Event
}

// look takes m if it is wanted; stop reports that the read must end (the
// message was not taken): max taken already, or too many looked at.
func (r *reading) look(m slack.Message, want wantFunc) (stop bool) {
	if r.looked++; r.looked > readFactor*r.max {
		return true
	}
	ev, ok, counts := want(m)
	if !ok {
		return false
	}
	if counts {
		if r.counted == r.max {
			return true
		}
		r.counted++
	}
	r.evs = append(r.evs, ev)
	return false
}

// readReplies reads the replies of the thread rooted at root with a ts in
// (oldest, latest], oldest first, without the root; past max, the later
// ones are what is not taken.
func (a *Adapter) readReplies(ctx context.Context, channel, root, oldest, latest string, want wantFunc, max int) (evs []adapters.Event, more bool, err error) {
	r := reading{max: max}
	cursor := ""
	for {
		var page []slack.Message
		var hasMore bool
		var next string
		err := a.call(ctx, "conversations.replies", "", func(ctx context.Context) error {
			var err error
			page, hasMore, next, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: root, Oldest: oldest, Latest: latest, Inclusive: true,
				Limit: a.catchUpPage(), Cursor: cursor,
			})
			return err
		})
		if err != nil {
			return r.evs, false, fmt.Errorf("slack conversations.replies %s/%s: %w", channel, root, err)
		}
		for _, m := range page {
			// The parent heads the first page whatever oldest says;
			// oldest itself is the last message already taken.
			if m.Timestamp == root || !tsAfter(m.Timestamp, oldest) {
				continue
			}
			if r.look(m, want) {
				return r.evs, true, nil
			}
		}
		if !hasMore || next == "" {
			return r.evs, false, nil
		}
		cursor = next
	}
}

// readHistory reads the channel's top-level messages with a ts in
// (oldest, latest] and gives what it takes oldest first. Slack pages from
// the newest back: past max, the oldest part of the range is what is not
// taken.
func (a *Adapter) readHistory(ctx context.Context, channel, oldest, latest string, want wantFunc, max int) (evs []adapters.Event, more bool, err error) {
	r := reading{max: max}
	defer func() { slices.Reverse(evs) }()
	cursor := ""
	for {
		var resp *slack.GetConversationHistoryResponse
		err := a.call(ctx, "conversations.history", "", func(ctx context.Context) error {
			var err error
			resp, err = a.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: channel, Oldest: oldest, Latest: latest, Inclusive: true,
				Limit: a.catchUpPage(), Cursor: cursor,
			})
			return err
		})
		if err != nil {
			return r.evs, false, fmt.Errorf("slack conversations.history %s: %w", channel, err)
		}
		for _, m := range resp.Messages {
			if !tsAfter(m.Timestamp, oldest) {
				continue
			}
			if r.look(m, want) {
				return r.evs, true, nil
			}
		}
		next := resp.ResponseMetaData.NextCursor
		if !resp.HasMore || next == "" {
			return r.evs, false, nil
		}
		cursor = next
	}
}

func (a *Adapter) catchUpPage() int {
	if a.cfg.catchUpPage > 0 {
		return a.cfg.catchUpPage
	}
	return defaultCatchUpPage
}

// slackError is Slack's error code of err ("" when it is not one).
func slackError(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// A ts is "<unix seconds>.<microseconds>"; these compare and make them as
// numbers, not as strings.

type tsNum struct{ sec, usec int64 }

func parseTS(ts string) (tsNum, bool) {
	s, u, _ := strings.Cut(ts, ".")
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return tsNum{}, false
	}
	var usec int64
	if u != "" {
		if len(u) > 6 {
			u = u[:6]
		}
		usec, err = strconv.ParseInt(u+strings.Repeat("0", 6-len(u)), 10, 64)
		if err != nil {
			return tsNum{}, false
		}
	}
	return tsNum{sec, usec}, true
}

// tsAfter reports whether ts a is later than b; "" is before every ts,
// and a ts that does not parse is after none.
func tsAfter(a, b string) bool {
	x, ok := parseTS(a)
	if !ok {
		return false
	}
	if b == "" {
		return true
	}
	y, ok := parseTS(b)
	if !ok {
		return true
	}
	return x.sec > y.sec || (x.sec == y.sec && x.usec > y.usec)
}

// latestTS is the latest of the ts given ("" for none).
func latestTS(ts ...string) string {
	out := ""
	for _, t := range ts {
		if t != "" && (out == "" || tsAfter(t, out)) {
			out = t
		}
	}
	return out
}

// tsOf is t as a ts (the epoch for anything before it).
func tsOf(t time.Time) string {
	if t.Unix() < 0 {
		return "0"
	}
	return strconv.FormatInt(t.Unix(), 10) + "." + fmt.Sprintf("%06d", t.Nanosecond()/1000)
}
