package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/store"
)

// Messages taken in, and not lost to a restart.
//
// Deliver records each message before it acks it (the dedupe): from then on
// the platform will not deliver it again. A message is settled once the
// bot is done with it: a turn took it up (its row is in the store, and a
// restart tells of that turn), it was a command or a click, or the thread
// was told why it was not taken. Should the bot die in between (a message
// waiting for a slot, for claude to start, or queued behind a turn), the
// next start tells its thread that it was not taken up, once.

// msgKey names a message taken in, as the store's dedupe does.
type msgKey struct{ platform, id string }

func keyOf(ev adapters.Event) msgKey { return msgKey{ev.Thread.Platform, ev.ID()} }

// settleTaken settles the messages sent to claude that wait for their
// turn to be recorded: it has been, or the thread was told what became of
// them (the process ended).
func (w *worker) settleTaken(ctx context.Context) {
	for _, k := range w.awaitingTurn {
		w.records.settle(ctx, k)
	}
	w.awaitingTurn = w.awaitingTurn[:0]
}

// tellUnsettled tells each thread whose messages a restart cut off before
// they were taken up, once: a message is settled only once its notice is
// posted, so a thread whose platform does not run now is told at a later
// start.
func (b *Bot) tellUnsettled(ctx context.Context) error {
	ms, err := b.store.UnsettledMessages(ctx)
	if err != nil {
		return err
	}
	for _, group := range byThread(ms, func(m store.ReceivedMessage) string { return m.ThreadKey }) {
		ref, ok := adapters.ThreadKey(group[0].ThreadKey).Ref()
		if ok && b.adapter(ref.Platform) == nil {
			b.log.Info("messages cut off by a restart not told: their platform does not run now", "thread", group[0].ThreadKey)
			continue
		}
		if ok {
			pctx, cancel := context.WithTimeout(ctx, noticeTimeout)
			_, err := b.adapter(ref.Platform).Post(pctx, ref, adapters.Message{Kind: adapters.KindNotice, Text: unsettledText(group), Error: true})
			cancel()
			if err != nil {
				b.log.Warn("tell a thread its messages were not taken up (again at the next start)", "thread", group[0].ThreadKey, "err", err)
				continue
			}
		} else {
			// Nowhere to say it, ever: do not try again at every start.
			b.log.Warn("message cut off by a restart in an unreadable thread key: not told", "thread", group[0].ThreadKey)
		}
		for _, m := range group {
			if err := b.store.SettleMessage(ctx, m.Platform, m.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

// unsettledText tells a thread which of its messages a restart cut off.
func unsettledText(ms []store.ReceivedMessage) string {
	first := ms[0]
	what := "your message"
	if t := strings.TrimSpace(first.Text); t != "" {
		what = "“" + text.Shorten(text.OneLine(t), 80) + "”"
	}
	more := ""
	if n := len(ms) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d later %s)", n, text.Plural(n, "message", "messages"))
	}
	return fmt.Sprintf("The bot restarted before Claude took up %s, sent %s%s: it was not run. "+
		"Send it again if it still matters.", what, first.ReceivedAt.UTC().Format("2006-01-02 15:04 UTC"), more)
}
