package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
)

// Catch-up: what was posted while the bot was away.
//
// Slack retries an event it could not deliver a few times, then drops it:
// a message posted while the bot was down, or its socket cut, for longer
// than that is never delivered. So on each Socket Mode connect (at start in
// HTTP mode) the adapter reads back the threads that had a session active
// within Config.CatchUp (conversations.replies) and the channels holding
// them (conversations.history, for new top-level mentions, then the
// replies to such a mention), after the last message the bot handled
// there, and hands what it missed to the bot the way live events go (toEvent: the bot's own messages, other bots', edits
// and deletions are left out alike). The bot's dedupe, keyed by message,
// makes a message both read back and redelivered by Slack one turn.
//
// Each thread that gets something is told it was picked up late, once per
// catch-up. Messages from people who may not use the bot are handed over
// too, and the bot refuses them as it does live (told, audited); they are
// not counted, told late, nor allowed to crowd out others' messages. A
// read takes at most Config.CatchUpMax messages per thread and per channel:
// a thread is told that later messages were not picked up; a channel's
// older top-level messages past it are not read (logged). What the live
// path handed over is not read back (seen.go).

// CatchUpState is what catch-up reads of the bot's records and keeps between
// runs. cmd/claudeops keeps it in the bot's database, so that this package
// need not import the store (like adapters/matrix's State).
type CatchUpState interface {
	// ActiveThreads returns the Slack threads whose session was active at
	// or after since, the most recently active first.
	ActiveThreads(ctx context.Context, since time.Time) ([]ActiveThread, error)
	// Handled returns the messages of channel (in workspace team) that the
	// bot recorded as received, with a ts after afterTS.
	Handled(ctx context.Context, team, channel, afterTS string) ([]HandledMessage, error)
	// Position is the ts catch-up last read the conversation key up to,
	// "" when it never did.
	Position(ctx context.Context, key string) (string, error)
	// SavePosition records that catch-up has dealt with key up to ts.
	SavePosition(ctx context.Context, key, ts string, at time.Time) error
	// ForgetPositions drops the positions saved before cutoff: catch-up
	// reaches no further back.
	ForgetPositions(ctx context.Context, cutoff time.Time) error
}

// ActiveThread is a thread the bot had a session in.
type ActiveThread struct {
	Channel, ThreadTS string
	LastActive        time.Time
}

// HandledMessage is a message the bot took in (its dedupe record).
type HandledMessage struct {
	// ID is the adapters.Incoming.ID it was recorded under:
	// team/channel/ts.
	ID string
	// ThreadTS is the root of the thread it went to.
	ThreadTS   string
	ReceivedAt time.Time
}

// defaultCatchUpMax bounds the messages read back per thread and per
// channel: below the bot's mailbox per thread (64), so that a thread's
// backlog is taken whole.
const defaultCatchUpMax = 50

// SetCatchUpState gives catch-up the bot's records and who may use the bot
// in a channel (nil: everyone, the bot still checks). Call it before Run;
// without it catch-up does not run.
func (a *Adapter) SetCatchUpState(st CatchUpState, mayUse func(channel, user string) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUpState, a.mayUse = st, mayUse
}

// catchUps runs one catch-up at a time: a new connect cancels the one
// still running, which the next one redoes (what it finished is saved).
type catchUps struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// startCatchUp starts a catch-up of what was posted before now.
func (a *Adapter) startCatchUp(ctx context.Context) {
	a.mu.Lock()
	st, mayUse := a.catchUpState, a.mayUse
	a.mu.Unlock()
	if st == nil || a.cfg.CatchUp <= 0 {
		return
	}
	_, _, team, _ := a.identity()
	c := &catchUp{a: a, st: st, mayUse: mayUse, team: team, at: a.now(), max: a.cfg.CatchUpMax,
		handed: map[string]bool{}, replied: map[string]bool{}}
	if c.max <= 0 {
		c.max = defaultCatchUpMax
	}
	c.cutoff = c.at.Add(-a.cfg.CatchUp)
	c.latest = tsOf(c.at)
	// Taken now, before this connection's events: they may be Slack's
	// redeliveries of what was missed, which must not hide what was
	// missed with them.
	c.seen = a.seen.snapshot()

	a.catchUps.mu.Lock()
	defer a.catchUps.mu.Unlock()
	prevCancel, prevDone := a.catchUps.cancel, a.catchUps.done
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	a.catchUps.cancel, a.catchUps.done = cancel, done
	go func() {
		defer close(done)
		defer cancel()
		if prevCancel != nil {
			prevCancel()
			<-prevDone
		}
		if err := c.run(cctx); err != nil && cctx.Err() == nil {
			a.log.Warn("slack: catch-up stopped", "err", err)
		}
	}()
}

// waitCatchUps waits for the catch-up running, if any (its context ends
// with Run's).
func (a *Adapter) waitCatchUps() {
	a.catchUps.mu.Lock()
	done := a.catchUps.done
	a.catchUps.mu.Unlock()
	if done != nil {
		<-done
	}
}

// catchUp is one catch-up, of what was posted before at.
type catchUp struct {
	a      *Adapter
	st     CatchUpState
	mayUse func(channel, user string) bool
	team   string
	at     time.Time
	cutoff time.Time
	latest string // at as a ts: later messages come live
	max    int

	// handed are the ids of the messages this catch-up handed over: a
	// broadcast reply shows in its thread and in the channel.
	handed map[string]bool
	// replied are the ts of the top-level messages read back that have
	// replies: a mention missed may have been answered in its thread too.
	replied map[string]bool
	// seen is what the live path had handed over at the connect, by
	// conversation (seenLive).
	seen map[string]string

	threads, taken, told int // for the log
}

func (c *catchUp) run(ctx context.Context) error {
	active, err := c.st.ActiveThreads(ctx, c.cutoff)
	if err != nil {
		return fmt.Errorf("list the threads active since %s: %w", c.cutoff.UTC().Format(time.RFC3339), err)
	}
	var order []string
	byChannel := map[string][]ActiveThread{}
	for _, t := range active {
		if _, ok := byChannel[t.Channel]; !ok {
			order = append(order, t.Channel)
		}
		byChannel[t.Channel] = append(byChannel[t.Channel], t)
	}
	for _, ch := range order {
		if err := c.channel(ctx, ch, byChannel[ch]); err != nil {
			return err
		}
	}
	if err := c.st.ForgetPositions(ctx, c.cutoff); err != nil {
		c.a.log.Warn("slack: catch-up: forget old positions", "err", err)
	}
	c.a.log.Info("slack: caught up", "channels", len(order), "threads", c.threads,
		"messages", c.taken, "told", c.told, "since", c.cutoff.UTC().Format(time.RFC3339))
	return nil
}

// handled is what the bot recorded in one channel.
type handled struct {
	recorded map[string]bool   // ts → taken in
	lastIn   map[string]string // thread root → latest ts taken before the connect
	lastTop  string            // latest top-level ts taken before the connect
}

func (c *catchUp) handledIn(ctx context.Context, channel string) (handled, error) {
	h := handled{recorded: map[string]bool{}, lastIn: map[string]string{}}
	msgs, err := c.st.Handled(ctx, c.team, channel, tsOf(c.cutoff))
	if err != nil {
		return h, fmt.Errorf("read what the bot took in %s: %w", channel, err)
	}
	prefix := messageID(c.team, channel, "")
	for _, m := range msgs {
		if len(m.ID) <= len(prefix) || m.ID[:len(prefix)] != prefix {
			continue
		}
		ts := m.ID[len(prefix):]
		if _, ok := parseTS(ts); !ok {
			continue // a slash command's id
		}
		h.recorded[ts] = true
		// Taken since the connect: maybe a redelivery of what was missed
		// before it, which must not hide what was missed with it. (Stored
		// times are whole milliseconds: one in the connect's millisecond
		// counts as after it.)
		if !m.ReceivedAt.Before(c.at.Truncate(time.Millisecond)) {
			continue
		}
		h.lastIn[m.ThreadTS] = latestTS(h.lastIn[m.ThreadTS], ts)
		if m.ThreadTS == ts {
			h.lastTop = latestTS(h.lastTop, ts)
		}
	}
	return h, nil
}

// channel catches up the active threads of a channel (the most recently
// active first), then its new top-level mentions.
func (c *catchUp) channel(ctx context.Context, channel string, threads []ActiveThread) error {
	h, err := c.handledIn(ctx, channel)
	if err != nil {
		c.a.log.Warn("slack: catch-up skips a channel", "channel", channel, "err", err)
		return nil
	}
	for _, t := range threads {
		gone, err := c.thread(ctx, channel, t.ThreadTS, h)
		if err != nil || gone {
			return err
		}
	}
	return c.mentions(ctx, channel, h)
}

// position is where key was last read up to ("" if never, or unreadable).
func (c *catchUp) position(ctx context.Context, key string) string {
	p, err := c.st.Position(ctx, key)
	if err != nil {
		c.a.log.Warn("slack: catch-up position", "key", key, "err", err)
		return ""
	}
	return p
}

func (c *catchUp) savePosition(ctx context.Context, key string) {
	if err := c.st.SavePosition(ctx, key, c.latest, c.a.now()); err != nil {
		c.a.log.Warn("slack: catch-up: save position", "key", key, "err", err)
	}
}

// unreadable reports whether a read failed because the channel cannot be
// read any more (the bot was removed, the channel deleted): logged, and
// the channel is left alone. Other failures are logged too; the next
// catch-up tries again.
func (c *catchUp) unreadable(channel string, err error) bool {
	switch slackError(err) {
	case "channel_not_found", "not_in_channel", "is_archived", "missing_scope":
		c.a.log.Info("slack: catch-up cannot read a channel", "channel", channel, "err", err)
		return true
	}
	if !errors.Is(err, context.Canceled) {
		c.a.log.Warn("slack: catch-up read failed", "channel", channel, "err", err)
	}
	return false
}

// thread catches up one thread. gone reports that its channel cannot be
// read.
func (c *catchUp) thread(ctx context.Context, channel, root string, h handled) (gone bool, err error) {
	key := c.team + "/" + channel + "/" + root
	since := latestTS(tsOf(c.cutoff), root, c.position(ctx, key), h.lastIn[root], c.seen[key])
	evs, more, err := c.a.readReplies(ctx, channel, root, since, c.latest, c.want(channel, h), c.max)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, ctx.Err()
	case slackError(err) == "thread_not_found":
		c.savePosition(ctx, key) // its parent was deleted: nothing left to read
		return false, nil
	case err != nil:
		return c.unreadable(channel, err), nil
	}
	c.threads++
	if n := c.allowed(evs); n > 0 || more {
		c.tell(ctx, adapters.ThreadRef{Platform: Platform, Channel: channel, Thread: root}, n, more)
	}
	if err := c.hand(ctx, evs); err != nil {
		return false, err
	}
	c.savePosition(ctx, key)
	return false, nil
}

// mentions catches up a channel's top-level messages: the mentions of the
// bot (every message, in a DM), each the start of a thread.
func (c *catchUp) mentions(ctx context.Context, channel string, h handled) error {
	key := c.team + "/" + channel
	since := latestTS(tsOf(c.cutoff), c.position(ctx, key), h.lastTop, c.seen[key])
	evs, more, err := c.a.readHistory(ctx, channel, since, c.latest, c.want(channel, h), c.max)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		c.unreadable(channel, err)
		return nil
	}
	if more {
		c.a.log.Warn("slack: catch-up read only the latest top-level messages of a channel; mentions before them are not picked up",
			"channel", channel, "taken", len(evs), "since", since)
	}
	count := map[adapters.ThreadRef]int{}
	capped := map[adapters.ThreadRef]bool{}
	replies := map[adapters.ThreadRef][]adapters.Event{}
	inHistory := map[string]bool{}
	for _, ev := range evs {
		inHistory[ev.Message.ID] = true
	}
	for _, ev := range evs {
		count[ev.Thread] += c.allowed([]adapters.Event{ev})
		rs, more, err := c.repliesTo(ctx, channel, ev, h)
		if err != nil {
			return err
		}
		rs = slices.DeleteFunc(rs, func(r adapters.Event) bool { return inHistory[r.Message.ID] })
		replies[ev.Thread], capped[ev.Thread] = rs, more
		count[ev.Thread] += c.allowed(rs)
	}
	told := map[adapters.ThreadRef]bool{}
	for _, ev := range evs {
		if n := count[ev.Thread]; !told[ev.Thread] && (n > 0 || capped[ev.Thread]) {
			told[ev.Thread] = true
			c.tell(ctx, ev.Thread, n, capped[ev.Thread])
		}
		// The mention first: it starts the thread its replies go to.
		if err := c.hand(ctx, append([]adapters.Event{ev}, replies[ev.Thread]...)); err != nil {
			return err
		}
		delete(replies, ev.Thread)
	}
	c.savePosition(ctx, key)
	return nil
}

// repliesTo reads the replies to a mention read back, when it has any: a
// thread started while the bot was away may have gone on without it. A
// refused mention starts no thread, so its replies are not read. A failed
// read is logged and leaves the replies out (the mention is still taken).
func (c *catchUp) repliesTo(ctx context.Context, channel string, ev adapters.Event, h handled) (evs []adapters.Event, more bool, err error) {
	root := ev.Thread.Thread
	if !c.replied[root] || ev.Message.ID != messageID(c.team, channel, root) || c.allowed([]adapters.Event{ev}) == 0 {
		return nil, false, nil
	}
	evs, more, err = c.a.readReplies(ctx, channel, root, root, c.latest, c.want(channel, h), c.max)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, false, ctx.Err()
	case err != nil:
		c.a.log.Warn("slack: catch-up could not read the replies to a missed mention", "channel", channel, "thread", root, "err", err)
		return nil, false, nil
	}
	return evs, more, nil
}

// want is what of a channel's messages read back the bot is to get: what it
// has not taken in and would take live. What it will refuse (its sender
// may not use it) does not count.
func (c *catchUp) want(channel string, h handled) wantFunc {
	return func(m slack.Message) (ev adapters.Event, ok, counts bool) {
		if h.recorded[m.Timestamp] {
			return ev, false, false
		}
		if m.ReplyCount > 0 && (m.ThreadTimestamp == "" || m.ThreadTimestamp == m.Timestamp) {
			c.replied[m.Timestamp] = true
		}
		ev, ok = c.a.toEvent(fromMessage(channel, m), c.team)
		if !ok || c.handed[ev.Message.ID] {
			return ev, false, false
		}
		return ev, true, c.allowed([]adapters.Event{ev}) == 1
	}
}

// allowed is how many of evs are from people who may use the bot.
func (c *catchUp) allowed(evs []adapters.Event) int {
	n := 0
	for _, ev := range evs {
		if c.mayUse == nil || c.mayUse(ev.Thread.Channel, ev.User.ID) {
			n++
		}
	}
	return n
}

// hand gives the bot what was missed, in order, the way live events go.
func (c *catchUp) hand(ctx context.Context, evs []adapters.Event) error {
	for _, ev := range evs {
		if c.handed[ev.Message.ID] {
			continue // a broadcast reply, read in its thread and its channel
		}
		if err := c.a.handOver(ctx, ev); err != nil {
			return fmt.Errorf("hand over %s: %w", ev.Message.ID, err)
		}
		c.handed[ev.Message.ID] = true
		c.taken++
	}
	return nil
}

// tell says in the thread that n messages there were picked up late (and,
// capped, that later ones were not picked up at all).
func (c *catchUp) tell(ctx context.Context, t adapters.ThreadRef, n int, capped bool) {
	if _, err := c.a.Post(ctx, t, adapters.Message{Kind: adapters.KindNotice, Text: lateNotice(n, capped, c.max)}); err != nil {
		c.a.log.Warn("slack: catch-up notice not posted", "thread", t.Key(), "err", err)
		return
	}
	c.told++
}

// lateNotice is what a thread is told.
func lateNotice(n int, capped bool, max int) string {
	var s string
	switch n {
	case 0:
	case 1:
		s = "Picked up late: the bot was offline when this was sent."
	default:
		s = fmt.Sprintf("Picked up late: the bot was offline when the %d messages above were sent; they are taken in order.", n)
	}
	if capped {
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("More was sent here while the bot was offline than it picks up at once (%d messages): "+
			"later messages were not picked up; send again what still matters.", max)
	}
	return s
}
