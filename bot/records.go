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
// timer of their next try (C is nil while none is owed). The worker owns
// them: every method runs on its loop.
type records struct {
	deps
	owed  []owedWrite
	timer *time.Timer
	C     <-chan time.Time
	delay time.Duration
	tries int
}

func (r *records) pending() bool { return len(r.owed) > 0 }

// record writes what the thread was just shown, after those still owed;
// a write the storage refuses is owed and tried again.
func (r *records) record(ctx context.Context, what string, write func(ctx context.Context) error) {
	r.owed = append(r.owed, owedWrite{what: what, write: write})
	r.writeOwed(ctx)
}

// writeOwed tries the owed writes in order; it stops at the first the
// storage refuses and sets the timer of the next try.
func (r *records) writeOwed(ctx context.Context) {
	freed := false
	for len(r.owed) > 0 {
		o := r.owed[0]
		err := o.write(ctx)
		cause := store.FaultCause(err)
		if cause == store.CauseFull && !freed {
			freed = true
			if ok, ferr := r.store.FreeReserve(); ok {
				r.log.Warn("the disk is full: the space the bot kept beside its database is given back, to record what the thread was shown",
					"record", o.what, "err", err)
				continue
			} else if ferr != nil {
				r.log.Error("give back the space kept beside the database", "err", ferr)
			}
		}
		if err != nil && r.storageFault("record "+o.what, err) {
			r.owe(err, cause)
			return
		}
		if err != nil {
			// The record's own error (no such turn, say): trying again
			// would not change it.
			r.log.Error("record "+o.what, "err", err)
		} else if r.tries > 0 {
			r.cfg.Faults.Worked()
			r.log.Debug("recorded after the storage refused it", "record", o.what, "tries", r.tries+1)
		}
		r.owed = r.owed[1:]
	}
	r.stop()
	r.tries, r.delay = 0, 0
}

// owe sets the next try of the writes owed, backing off up to
// recordRetryMax. The cause is logged once for the bot (store.Faults);
// the thread's own first refusal only at debug.
func (r *records) owe(err error, cause string) {
	if r.tries == 0 {
		r.log.Debug("the storage refused a record of what the thread was shown: tried again until it takes it",
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
func (r *records) lastTry() {
	if !r.pending() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordLastTry)
	defer cancel()
	r.writeOwed(ctx)
	for _, o := range r.owed {
		r.log.Error("a record of what the thread was shown is lost: the storage refused it until the bot stopped; "+
			"the next start tells the thread it cannot know how the turn ended", "record", o.what)
	}
	r.owed = nil
	r.stop()
}

// recordTurnEnd records the end of turn t (id 0: its start was never
// recorded, so the whole turn is).
func (r *records) recordTurnEnd(ctx context.Context, id int64, end store.Turn) {
	what := fmt.Sprintf("the end of turn %d (%s)", id, end.ResultSubtype)
	if id == 0 {
		what = fmt.Sprintf("a turn whose start was not recorded (%s)", end.ResultSubtype)
	}
	r.record(ctx, what, func(ctx context.Context) error {
		if id == 0 {
			_, err := r.store.StartTurn(ctx, end)
			return err
		}
		end.ID = id
		return r.store.FinishTurn(ctx, end)
	})
}

// settle records that the bot is done with message k, as owed as any
// record of what the thread was shown: a message a turn took up, left
// unsettled, would be told as "not run" at the next start.
func (r *records) settle(ctx context.Context, k msgKey) {
	if k.id == "" {
		return // the scheduler's own prompt: nobody to tell
	}
	r.record(ctx, "the settlement of message "+k.id, func(ctx context.Context) error {
		return r.store.SettleMessage(ctx, k.platform, k.id)
	})
}
