package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/claudeops/claudeops/store"
)

// maxScan bounds the slots enumerated for one gap (catch-up after downtime,
// or a clock jump). "@every" schedules are counted arithmetically; a 5-field
// spec fires at most once a minute, so this covers ~69 days of a
// minute-by-minute schedule exactly; beyond, the count is a lower bound.
const maxScan = 100_000

// gap is the slots of a schedule in (from, to].
type gap struct {
	n           int64
	truncated   bool // n is a lower bound
	first, last time.Time
	prev        time.Time // the slot before last; zero if n < 2
}

// scanGap enumerates sched's slots in (from, to]. Past maxScan slots it
// jumps to to-tail, so the slots near to are still exact.
func scanGap(sched cron.Schedule, from, to time.Time, tail time.Duration) gap {
	var g gap
	if a, ok := sched.(anchoredEvery); ok {
		g.n, g.first, g.last = a.countBetween(from, to)
		if g.n >= 2 {
			g.prev = g.last.Add(-a.every)
		}
		return g
	}
	for t := from; ; {
		nx := sched.Next(t)
		if nx.IsZero() || nx.After(to) {
			return g
		}
		if g.n == 0 {
			g.first = nx
		}
		g.prev, g.last = g.last, nx
		g.n++
		t = nx
		switch g.n {
		case maxScan:
			g.truncated = true
			if j := to.Add(-tail); j.After(t) {
				t = j
			}
		case 2 * maxScan:
			return g
		}
	}
}

// catchUp deals with e's slots missed before now, since its last recorded
// slot or its last change: the latest runs if it lies within the catch-up
// window, and the others are recorded as ONE missed row (at the latest of
// them, with Missed counting them), however long the downtime: a 3-day
// outage of an "@every 20s" schedule writes one row, not 13k.
func (s *Scheduler) catchUp(ctx context.Context, e *entry, now time.Time) {
	s.mu.Lock()
	sc, spec := e.sched, e.spec
	s.mu.Unlock()
	from := sc.CreatedAt
	if sc.UpdatedAt.After(from) {
		from = sc.UpdatedAt
	}
	last, ok, err := s.st.LastSlot(ctx, sc.ID)
	if err != nil {
		s.log.Error("catch-up: last slot", "schedule", sc.ID, "err", err)
		return
	}
	if ok && last.After(from) {
		from = last
	}
	if from.IsZero() {
		return
	}
	s.settleGap(ctx, sc, scanGap(spec, from, now, sc.CatchUp), now, sc.CatchUp, "while no scheduler ran")
}

// settleGap records the missed slots of g and runs its latest if that is
// no older than window.
func (s *Scheduler) settleGap(ctx context.Context, sc Schedule, g gap, now time.Time, window time.Duration, why string) {
	if g.n == 0 {
		return
	}
	var run time.Time
	missed, at := g.n, g.last
	if now.Sub(g.last) <= window {
		run, missed, at = g.last, missed-1, g.prev
	}
	if missed > 0 {
		if at.IsZero() {
			at = g.first
		}
		count := fmt.Sprint(missed)
		if g.truncated {
			count = "at least " + count
		}
		msg := fmt.Sprintf("missed %s runs from %s to %s %s", count,
			g.first.Format(time.RFC3339), at.Format(time.RFC3339), why)
		s.log.Warn("missed runs", "schedule", sc.ID, "count", count, "first", g.first, "last", at)
		if stored, err := s.st.RecordRun(ctx, Run{ScheduleID: sc.ID, Slot: at, StartedAt: now, EndedAt: now,
			Status: store.RunMissed, Missed: int(missed), Error: msg}); err != nil {
			s.log.Error("record missed runs", "schedule", sc.ID, "err", err)
		} else if stored {
			s.cfg.Observer.ScheduleRuns(string(store.RunMissed), int(missed))
		}
	}
	if !run.IsZero() {
		if _, err := s.dispatch(sc.ID, run); err != nil && !errors.Is(err, ErrBusy) {
			s.log.Error("catch-up run", "schedule", sc.ID, "slot", run, "err", err)
		}
	}
}

// tick is the cron job of schedule id: it finds the slot that came due
// (the latest since the cursor; more than one means the clock jumped or
// the process stalled, and the earlier ones are missed) and dispatches it.
func (s *Scheduler) tick(id int64) {
	now := s.now()
	s.mu.Lock()
	e := s.entries[id]
	if e == nil || e.cronID == 0 || s.closing {
		s.mu.Unlock()
		return
	}
	g := scanGap(e.spec, e.cursor, now, time.Hour)
	if g.n == 0 {
		s.mu.Unlock()
		return
	}
	e.cursor = g.last
	sc, ctx := e.sched, s.ctx
	s.mu.Unlock()
	// Only the latest slot runs: window 0 past it.
	s.settleGap(ctx, sc, g, g.last, 0, "(clock jump or stall)")
}
