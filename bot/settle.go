package bot

import (
	"context"

	"github.com/claudeops/claudeops/adapters"
)

// Messages taken in, and not lost to a restart.
//
// Deliver records each message before it acks it (the dedupe): from then on
// the platform will not deliver it again. A message is settled once the
// bot is done with it: a turn took it up (its row is in the store, and a
// restart tells of that turn), it was a command or a click, or the thread
// was told why it was not taken. Should the bot die in between (a message
// waiting for a slot, for claude to start, or queued behind a turn), the
// next start tells its thread that it was not taken up, once (Recover,
// recover.go).

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
