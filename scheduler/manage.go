package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/store"
)

// Add validates and normalizes sc (see Normalize), stores it with
// CreatedAt (and UpdatedAt) now unless set, and, if Run is running and sc
// is not paused, schedules it from now on (no catch-up). It returns the
// stored schedule.
func (s *Scheduler) Add(ctx context.Context, sc Schedule) (Schedule, error) {
	sc, _, err := s.Normalize(sc)
	if err != nil {
		return sc, err
	}
	now := s.now()
	if sc.CreatedAt.IsZero() {
		sc.CreatedAt = now
	}
	if sc.UpdatedAt.IsZero() {
		sc.UpdatedAt = sc.CreatedAt
	}
	// Stored at ms precision: keep the in-memory copy the same, so that the
	// "@every" anchor agrees with what other processes read.
	sc.CreatedAt, sc.UpdatedAt = msUTC(sc.CreatedAt), msUTC(sc.UpdatedAt)
	id, err := s.st.AddSchedule(ctx, sc)
	if err != nil {
		return sc, err
	}
	sc.ID = id
	if s.running() && !sc.Paused {
		if _, err := s.register(sc, now); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// Reload rereads schedule id from the store (after the bot changed it) and
// reschedules it from now on; a paused or deleted one stops. A run in
// progress is not affected.
func (s *Scheduler) Reload(ctx context.Context, id int64) error {
	sc, ok, err := s.st.GetSchedule(ctx, id)
	if err != nil {
		return err
	}
	if !ok || sc.Paused {
		s.unregister(id, !ok)
		if !ok {
			return fmt.Errorf("%w %d", ErrUnknownSchedule, id)
		}
		return nil
	}
	if !s.running() {
		return nil
	}
	_, err = s.register(sc, s.now())
	return err
}

// SetPaused pauses or resumes schedule id, in the store and here. A resumed
// schedule is not caught up on the slots it skipped while paused.
func (s *Scheduler) SetPaused(ctx context.Context, id int64, paused bool) error {
	if !paused {
		// One that may not run (below the minimum interval) stays paused.
		sc, ok, err := s.st.GetSchedule(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w %d", ErrUnknownSchedule, id)
		}
		if _, _, err := s.Normalize(sc); err != nil {
			return err
		}
	}
	if err := s.st.SetPaused(ctx, id, paused, s.now()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w %d", ErrUnknownSchedule, id)
		}
		return err
	}
	return s.Reload(ctx, id)
}

// Remove deletes schedule id and its runs, and stops scheduling it. A run
// in progress finishes, but its record is gone with the schedule.
func (s *Scheduler) Remove(ctx context.Context, id int64) error {
	ok, err := s.st.DeleteSchedule(ctx, id)
	if err != nil {
		return err
	}
	s.unregister(id, true)
	if !ok {
		return fmt.Errorf("%w %d", ErrUnknownSchedule, id)
	}
	return nil
}

func (s *Scheduler) unregister(id int64, forget bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[id]
	if e == nil {
		return
	}
	if e.cronID != 0 {
		s.cron.Remove(e.cronID)
		e.cronID = 0
	}
	if forget && !e.running {
		delete(s.entries, id)
	}
}

// RunNow runs schedule id at once (paused or not), with the slot now
// (truncated to the millisecond), under its overlap policy: it returns
// ErrBusy if the slot was recorded skipped. It does not wait for the run.
func (s *Scheduler) RunNow(ctx context.Context, id int64) (time.Time, error) {
	if !s.running() {
		return time.Time{}, ErrNotRunning
	}
	sc, ok, err := s.st.GetSchedule(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, fmt.Errorf("%w %d", ErrUnknownSchedule, id)
	}
	sc, spec, err := s.Normalize(sc)
	if err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	e := s.entryLocked(id)
	if e.cronID == 0 { // not scheduled (paused): refresh what the run sees
		e.sched, e.loc = sc, spec.Location()
	}
	s.mu.Unlock()
	slot := msUTC(s.now())
	claimed, err := s.dispatch(id, slot)
	if err == nil && !claimed {
		err = fmt.Errorf("schedule %d: slot %s already taken", id, slot)
	}
	return slot, err
}

func (s *Scheduler) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctx != nil && !s.closing
}

func msUTC(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}
