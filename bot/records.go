package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/store"
)

// What a thread was shown is what the store records.
//
// A turn's end (its result and cost) and the settlement of the messages it
// took up are written before the thread is shown its footer. When the
// store refuses such a write because storage fails (store.FaultCause: a
// full disk, a read-only file system, an I/O error), the thread is still
// shown what Claude did, and the write waits in the worker's records:
// tried again in order with a bounded backoff on the worker's own loop (no
// goroutine of its own), and once more as the worker stops. A full disk
// first gets the store's reserve back (store.FreeReserve): the writes
// owed land in it. Meanwhile the worker is not retired (its idle session
// may be). What is still unwritten when the worker stops is logged as
// lost; the next start finds the turn without an end and tells its thread
// that it cannot know whether the turn finished (recover.go).

// Bounds of the backoff between two tries of the records owed.
const (
	recordRetryFirst = time.Second
	recordRetryMax   = 30 * time.Second
	// recordLastTry bounds the last try, as the worker stops.
	recordLastTry = 10 * time.Second
)

// owedWrite is a record the store refused: what it is, for the log, and
// how to write it.
type owedWrite struct {
	what  string
	write func(ctx context.Context) error
}

// records are the writes a thread owes the store, oldest first, and the
// timer of their next try (C is nil while none is owed).
type records struct {
	owed  []owedWrite
	timer *time.Timer
	C     <-chan time.Time
	delay time.Duration
	tries int
}

func (r *records) pending() bool { return len(r.owed) > 0 }

// record writes what the thread was just shown, after those still owed;
// a write the storage refuses is owed and tried again.
func (w *worker) record(ctx context.Context, what string, write func(ctx context.Context) error) {
	w.records.owed = append(w.records.owed, owedWrite{what: what, write: write})
	w.writeOwed(ctx)
}

// writeOwed tries the owed writes in order; it stops at the first the
// storage refuses and sets the timer of the next try.
func (w *worker) writeOwed(ctx context.Context) {
	r := &w.records
	freed := false
	for len(r.owed) > 0 {
		o := r.owed[0]
		err := o.write(ctx)
		cause := store.FaultCause(err)
		if cause == store.CauseFull && !freed {
			freed = true
			if ok, ferr := w.store.FreeReserve(); ok {
				w.log.Warn("the disk is full: the space the bot kept beside its database is given back, to record what the thread was shown",
					"record", o.what, "err", err)
				continue
			} else if ferr != nil {
				w.log.Error("give back the space kept beside the database", "err", ferr)
			}
		}
		if err != nil && w.storageFault("record "+o.what, err) {
			w.owe(err, cause)
			return
		}
		if err != nil {
			// The record's own error (no such turn, say): trying again
			// would not change it.
			w.log.Error("record "+o.what, "err", err)
		} else if r.tries > 0 {
			w.cfg.Faults.Worked()
			w.log.Debug("recorded after the storage refused it", "record", o.what, "tries", r.tries+1)
		}
		r.owed = r.owed[1:]
	}
	r.stop()
	r.tries, r.delay = 0, 0
}

// owe sets the next try of the writes owed, backing off up to
// recordRetryMax. The cause is logged once for the bot (store.Faults);
// the thread's own first refusal only at debug.
func (w *worker) owe(err error, cause string) {
	r := &w.records
	if r.tries == 0 {
		w.log.Debug("the storage refused a record of what the thread was shown: tried again until it takes it",
			"record", r.owed[0].what, "owed", len(r.owed), "cause", cause, "err", err)
	}
	r.tries++
	r.delay = min(max(2*r.delay, recordRetryFirst), recordRetryMax)
	r.stop()
	r.timer = time.NewTimer(r.delay)
	r.C = r.timer.C
}

func (r *records) stop() {
	if r.timer != nil {
		r.timer.Stop()
	}
	r.timer, r.C = nil, nil
}

// lastTry writes what is owed once more as the worker stops; what the
// storage still refuses is lost, and said so.
func (w *worker) lastTry() {
	if !w.records.pending() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordLastTry)
	defer cancel()
	w.writeOwed(ctx)
	for _, o := range w.records.owed {
		w.log.Error("a record of what the thread was shown is lost: the storage refused it until the bot stopped; "+
			"the next start tells the thread it cannot know how the turn ended", "record", o.what)
	}
	w.records.owed = nil
	w.records.stop()
}

// recordTurnEnd records the end of turn t (id 0: its start was never
// recorded, so the whole turn is).
func (w *worker) recordTurnEnd(ctx context.Context, id int64, end store.Turn) {
	what := fmt.Sprintf("the end of turn %d (%s)", id, end.ResultSubtype)
	if id == 0 {
		what = fmt.Sprintf("a turn whose start was not recorded (%s)", end.ResultSubtype)
	}
	w.record(ctx, what, func(ctx context.Context) error {
		if id == 0 {
			_, err := w.store.StartTurn(ctx, end)
			return err
		}
		end.ID = id
		return w.store.FinishTurn(ctx, end)
	})
}

// settle records that the bot is done with message k, as owed as any
// record of what the thread was shown: a message a turn took up, left
// unsettled, would be told as "not run" at the next start.
func (w *worker) settle(ctx context.Context, k msgKey) {
	if k.id == "" {
		return // the scheduler's own prompt: nobody to tell
	}
	w.record(ctx, "the settlement of message "+k.id, func(ctx context.Context) error {
		return w.store.SettleMessage(ctx, k.platform, k.id)
	})
}
