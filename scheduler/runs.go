package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/store"
)

// writeTimeout bounds a store write made after the scheduler's context ended
// (recording an interrupted run).
const writeTimeout = 10 * time.Second

// dispatch claims slot of schedule id and runs it, subject to the overlap
// policy, in a worker. It returns the claim's outcome: false if another
// process (or an earlier call) had claimed the slot; ErrBusy if the slot was
// recorded skipped.
func (s *Scheduler) dispatch(id int64, slot time.Time) (bool, error) {
	s.mu.Lock()
	ctx, closing := s.ctx, s.closing
	e := s.entries[id]
	s.mu.Unlock()
	if ctx == nil || closing || ctx.Err() != nil {
		return false, ErrNotRunning
	}
	if e == nil {
		return false, fmt.Errorf("%w %d", ErrUnknownSchedule, id)
	}
	claimed, err := s.st.ClaimRun(ctx, id, slot, s.now())
	if err != nil {
		return false, fmt.Errorf("claim schedule %d slot %s: %w", id, slot, err)
	}
	if !claimed {
		s.log.Debug("slot already claimed", "schedule", id, "slot", slot)
		return false, nil
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		s.finish(Run{ScheduleID: id, Slot: slot, StartedAt: s.now(), Status: store.RunInterrupted,
			Error: "scheduler stopped before the run started"})
		return true, nil
	}
	if e.running {
		policy := e.sched.Overlap
		if policy == OverlapQueue && len(e.queue) < s.cfg.MaxQueued {
			e.queue = append(e.queue, slot)
			s.mu.Unlock()
			s.log.Info("run queued behind the running one", "schedule", id, "slot", slot)
			return true, nil
		}
		s.mu.Unlock()
		why := "previous run still running"
		if policy == OverlapQueue {
			why = fmt.Sprintf("previous run still running and %d runs already queued", s.cfg.MaxQueued)
		}
		now := s.now()
		s.finish(Run{ScheduleID: id, Slot: slot, StartedAt: now, EndedAt: now, Status: store.RunSkipped, Error: why})
		return true, ErrBusy
	}
	e.running = true
	s.wg.Add(1)
	s.mu.Unlock()
	go s.worker(e, slot)
	return true, nil
}

// worker runs slot of e, then the slots queued behind it.
func (s *Scheduler) worker(e *entry, slot time.Time) {
	defer s.wg.Done()
	for {
		s.runOne(e, slot)
		s.mu.Lock()
		if len(e.queue) == 0 {
			e.running = false
			s.mu.Unlock()
			return
		}
		slot = e.queue[0]
		e.queue = e.queue[1:]
		s.mu.Unlock()
	}
}

type outcome struct {
	res Run
	err error
}

// runOne runs one claimed slot and records how it ended.
func (s *Scheduler) runOne(e *entry, slot time.Time) {
	s.mu.Lock()
	sc, ctx := e.sched, s.ctx
	if e.loc != nil {
		slot = slot.In(e.loc)
	}
	s.mu.Unlock()
	start := s.now()
	run := Run{ScheduleID: sc.ID, Slot: slot, StartedAt: start}
	if ctx.Err() != nil {
		run.EndedAt, run.Status, run.Error = start, store.RunInterrupted, "scheduler stopped before the run started"
		s.finish(run)
		return
	}
	log := s.log.With("schedule", sc.ID, "slot", slot)
	log.Info("run starts")
	runCtx, cancel := s.runContext(ctx, start, sc.Timeout)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				log.Error("runner panicked", "panic", r)
				done <- outcome{err: fmt.Errorf("runner panicked: %v", r)}
			}
		}()
		res, err := s.runner.RunScheduled(runCtx, sc, slot)
		done <- outcome{res, err}
	}()

	var out outcome
	var ctxEnded bool // the run's context ended before the runner returned
	select {
	case out = <-done:
		ctxEnded = out.err != nil && runCtx.Err() != nil
	case <-runCtx.Done():
		ctxEnded = true
		grace := time.NewTimer(s.cfg.StopGrace)
		select {
		case out = <-done:
		case <-grace.C:
			// The runner ignores its context; record the run without it.
			log.Error("runner did not return after its context ended; abandoned", "grace", s.cfg.StopGrace)
			out.err = fmt.Errorf("runner did not return within %s after its context ended", s.cfg.StopGrace)
		}
		grace.Stop()
	}
	run.EndedAt = s.now()
	run.SessionID, run.ThreadKey, run.Result = out.res.SessionID, out.res.ThreadKey, out.res.Result
	run.CostUSD, run.InputTokens, run.OutputTokens, run.NumTurns = out.res.CostUSD, out.res.InputTokens, out.res.OutputTokens, out.res.NumTurns
	run.Branch, run.Commit, run.PR = out.res.Branch, out.res.Commit, out.res.PR
	switch {
	case ctxEnded && ctx.Err() != nil:
		run.Status, run.Error = store.RunInterrupted, "scheduler stopped"
	case ctxEnded:
		run.Status, run.Error = store.RunTimedOut, fmt.Sprintf("timed out after %s", sc.Timeout)
	case out.err != nil:
		run.Status, run.Error = store.RunFailed, out.err.Error()
	default:
		run.Status = store.RunSucceeded
	}
	if out.err != nil && run.Status != store.RunFailed {
		run.Error += ": " + out.err.Error()
	}
	log.Info("run ended", "status", run.Status, "took", run.EndedAt.Sub(start), "err", run.Error)
	s.finish(run)
}

// Bounds of the backoff between two tries of a run's record the storage
// refused.
const (
	finishRetryFirst = time.Second
	finishRetryMax   = 30 * time.Second
)

// finish records a claimed run's outcome, even after Run's context ended,
// and prunes old runs. A record the storage refuses (store.FaultCause: a
// full disk, a read-only file system) is tried again, with a backoff, while
// the scheduler runs and once as it stops; one still refused then stays
// "running" for the next start to settle (settleRunning).
func (s *Scheduler) finish(r Run) {
	err := s.finishOnce(r)
	for delay := finishRetryFirst; err != nil && store.FaultCause(err) != ""; delay = min(2*delay, finishRetryMax) {
		if delay == finishRetryFirst {
			s.log.Error("the storage refused a run's record: tried again until it takes it",
				"schedule", r.ScheduleID, "slot", r.Slot, "status", r.Status, "err", err)
		}
		stopping := !s.wait(delay)
		err = s.finishOnce(r)
		if err == nil {
			s.log.Info("run recorded after the storage refused it", "schedule", r.ScheduleID, "slot", r.Slot, "status", r.Status)
		}
		if stopping {
			break
		}
	}
	if err != nil {
		s.log.Error("record run (the next start settles it)", "schedule", r.ScheduleID, "slot", r.Slot, "status", r.Status, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	// Counted once recorded: one left unrecorded is counted by the start
	// that records it interrupted.
	s.cfg.Observer.ScheduleRuns(string(r.Status), 1)
	if _, err := s.st.PruneRuns(ctx, r.ScheduleID, s.cfg.KeepRuns); err != nil {
		s.log.Error("prune runs", "schedule", r.ScheduleID, "err", err)
	}
}

func (s *Scheduler) finishOnce(r Run) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return s.st.FinishRun(ctx, r)
}

// wait waits d, or until the scheduler stops (false).
func (s *Scheduler) wait(d time.Duration) bool {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
