package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/claudeops/claudeops/store"
)

// Schedule is a recurring prompt, as the store keeps it.
type Schedule = store.Schedule

// Run is one slot of a schedule and what became of it.
type Run = store.ScheduleRun

// Policies.
const (
	OverlapSkip  = "skip"  // a slot that comes while the previous run runs is recorded skipped
	OverlapQueue = "queue" // … is run after it (at most Config.MaxQueued wait)
	ApprovalDeny = "deny"  // unattended runs deny permission requests no rule allows
	ApprovalPark = "park"  // … leave them pending for someone to decide
)

// Errors.
var (
	ErrUnknownSchedule = errors.New("unknown schedule")
	ErrNotRunning      = errors.New("scheduler is not running")
	ErrBusy            = errors.New("previous run still running")
	ErrInvalidSchedule = errors.New("invalid schedule")
	ErrTooFrequent     = errors.New("schedule fires too often")
)

// Runner runs one scheduled prompt; *bot.Bot satisfies it (the types are
// the store's, which both packages know, so neither imports the other).
// RunScheduled blocks until the run ends and must return soon after ctx is
// done (timeout or shutdown); a panic is recovered and recorded as a failed
// run. Of the Run it returns the scheduler takes only what the runner
// knows: SessionID, ThreadKey, Result, CostUSD, InputTokens, OutputTokens
// and NumTurns; slot, times, status and error are the scheduler's.
type Runner interface {
	RunScheduled(ctx context.Context, s Schedule, slot time.Time) (Run, error)
}

// Store is the part of *store.Store the scheduler uses.
type Store interface {
	AddSchedule(ctx context.Context, s store.Schedule) (int64, error)
	GetSchedule(ctx context.Context, id int64) (store.Schedule, bool, error)
	ListSchedules(ctx context.Context) ([]store.Schedule, error)
	SetPaused(ctx context.Context, id int64, paused bool, now time.Time) error
	DeleteSchedule(ctx context.Context, id int64) (bool, error)
	ClaimRun(ctx context.Context, scheduleID int64, slot, now time.Time) (bool, error)
	RecordRun(ctx context.Context, r store.ScheduleRun) (bool, error)
	FinishRun(ctx context.Context, r store.ScheduleRun) error
	PruneRuns(ctx context.Context, scheduleID int64, keep int) (int64, error)
	LastSlot(ctx context.Context, scheduleID int64) (time.Time, bool, error)
	InterruptStaleRuns(ctx context.Context, scheduleID int64, startedBefore, now time.Time) (int64, error)
}

// Config configures a Scheduler. Zero fields take the documented defaults.
type Config struct {
	// TimeZone is the zone of schedules that name none (IANA name). Default UTC.
	TimeZone string `env:"CLAUDEOPS_SCHEDULE_TZ" envDefault:"UTC"`
	// Timeout of a run when its schedule sets none. Default 30m.
	Timeout time.Duration `env:"CLAUDEOPS_SCHEDULE_TIMEOUT" envDefault:"30m"`
	// CatchUp is the catch-up window when a schedule sets none. Default 1h.
	CatchUp time.Duration `env:"CLAUDEOPS_SCHEDULE_CATCH_UP" envDefault:"1h"`
	// KeepRuns is how many runs per schedule are kept. Default 100.
	KeepRuns int `env:"CLAUDEOPS_SCHEDULE_KEEP_RUNS" envDefault:"100"`
	// MaxQueued bounds the slots waiting behind a running one under the
	// queue policy; more are recorded skipped. Default 10.
	MaxQueued int `env:"CLAUDEOPS_SCHEDULE_MAX_QUEUED" envDefault:"10"`
	// StopGrace is how long a runner may take to return once its context is
	// done before the run is recorded without it. Default 10s.
	StopGrace time.Duration `env:"CLAUDEOPS_SCHEDULE_STOP_GRACE" envDefault:"10s"`
	// MinInterval is the least time between two runs of a schedule, for
	// everyone: a spec that can fire closer is refused when added and not
	// run when loaded (a row written past Add). Default 5m; negative: no
	// minimum.
	MinInterval time.Duration `env:"CLAUDEOPS_SCHEDULE_MIN_INTERVAL" envDefault:"5m"`

	// Now is the clock; default time.Now. It must agree with the runtime's
	// clock, which robfig/cron's timers use (tests use testing/synctest).
	Now func() time.Time `env:"-"`
	// Logger; default slog.Default().
	Logger *slog.Logger `env:"-"`
}

// maxScan bounds the slots enumerated for one gap (catch-up after downtime,
// or a clock jump). "@every" schedules are counted arithmetically; a 5-field
// spec fires at most once a minute, so this covers ~69 days of a
// minute-by-minute schedule exactly; beyond, the count is a lower bound.
const maxScan = 100_000

// writeTimeout bounds a store write made after the scheduler's context ended
// (recording an interrupted run).
const writeTimeout = 10 * time.Second

// Scheduler runs schedules. Create it with New and start it with Run; Add,
// Reload, Remove, SetPaused and RunNow are safe for concurrent use, before
// and while Run runs.
type Scheduler struct {
	cfg    Config
	st     Store
	runner Runner
	log    *slog.Logger
	now    func() time.Time
	loc    *time.Location

	mu      sync.Mutex
	ctx     context.Context // Run's, nil before Run
	cron    *cron.Cron
	closing bool
	entries map[int64]*entry
	wg      sync.WaitGroup // workers
}

// entry is the live state of one schedule.
type entry struct {
	sched  Schedule
	spec   cron.Schedule  // anchored
	loc    *time.Location // the spec's; runners see slots in it
	cronID cron.EntryID   // 0 while not registered (paused, or before Run)
	cursor time.Time      // slots up to here are dealt with
	// running is true while a worker owns this schedule; queue holds
	// claimed slots waiting for it.
	running bool
	queue   []time.Time
}

// New validates cfg and returns a Scheduler; it does no I/O.
func New(cfg Config, st Store, runner Runner) (*Scheduler, error) {
	if st == nil || runner == nil {
		return nil, errors.New("scheduler: nil store or runner")
	}
	if cfg.TimeZone == "" {
		cfg.TimeZone = "UTC"
	}
	loc, err := time.LoadLocation(cfg.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w %q", ErrUnknownTimeZone, cfg.TimeZone)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Minute
	}
	if cfg.CatchUp <= 0 {
		cfg.CatchUp = time.Hour
	}
	if cfg.KeepRuns <= 0 {
		cfg.KeepRuns = 100
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = 10
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 10 * time.Second
	}
	if cfg.MinInterval == 0 {
		cfg.MinInterval = 5 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Scheduler{
		cfg: cfg, st: st, runner: runner, loc: loc, now: cfg.Now,
		log:     cfg.Logger.With("component", "scheduler"),
		entries: map[int64]*entry{},
	}, nil
}

// Normalize fills in s's defaults (time zone, timeout, overlap, catch-up,
// approval policy) and validates it, parsing its spec; Add does this too.
func (s *Scheduler) Normalize(sc Schedule) (Schedule, Spec, error) {
	if sc.Overlap == "" {
		sc.Overlap = OverlapSkip
	}
	if sc.ApprovalPolicy == "" {
		sc.ApprovalPolicy = ApprovalDeny
	}
	if sc.Timeout <= 0 {
		sc.Timeout = s.cfg.Timeout
	}
	if sc.CatchUp <= 0 {
		sc.CatchUp = s.cfg.CatchUp
	}
	if sc.Overlap != OverlapSkip && sc.Overlap != OverlapQueue {
		return sc, Spec{}, fmt.Errorf("%w: overlap policy %q (want skip or queue)", ErrInvalidSchedule, sc.Overlap)
	}
	if sc.ApprovalPolicy != ApprovalDeny && sc.ApprovalPolicy != ApprovalPark {
		return sc, Spec{}, fmt.Errorf("%w: approval policy %q (want deny or park)", ErrInvalidSchedule, sc.ApprovalPolicy)
	}
	spec, err := s.parse(sc)
	if err != nil {
		return sc, Spec{}, err
	}
	if err := spec.CheckMinInterval(s.cfg.MinInterval, s.now()); err != nil {
		return sc, Spec{}, err
	}
	switch {
	case spec.TimeZone() != "":
		sc.TimeZone = spec.TimeZone()
	case sc.TimeZone == "":
		sc.TimeZone = s.cfg.TimeZone
	}
	return sc, spec, nil
}

// Next returns sc's next n run times from now, once sc is normalized and
// validated as Add would.
func (s *Scheduler) Next(sc Schedule, n int) ([]time.Time, error) {
	_, spec, err := s.Normalize(sc)
	if err != nil {
		return nil, err
	}
	return spec.NextN(s.now(), n), nil
}

// parse parses sc's spec in sc's zone (or the default zone).
func (s *Scheduler) parse(sc Schedule) (Spec, error) {
	loc := s.loc
	if sc.TimeZone != "" {
		l, err := time.LoadLocation(sc.TimeZone)
		if err != nil {
			return Spec{}, fmt.Errorf("%w %q", ErrUnknownTimeZone, sc.TimeZone)
		}
		loc = l
	}
	return ParseIn(sc.Spec, loc)
}

// Run loads the schedules, catches up on the slots missed while no
// scheduler ran, and runs schedules until ctx is done. Then it stops taking
// slots, lets running runs see ctx's cancellation (they are recorded
// interrupted, as are queued ones), waits for them and returns. It returns
// an error only if it could not load the schedules. Call it once.
func (s *Scheduler) Run(ctx context.Context) error {
	clog := cronLogger{s.log}
	c := cron.New(cron.WithLocation(time.UTC), cron.WithLogger(clog),
		// Explicitly: robfig's default chain is empty, despite its docs.
		cron.WithChain(cron.Recover(clog)))
	s.mu.Lock()
	if s.ctx != nil {
		s.mu.Unlock()
		return errors.New("scheduler: Run called twice")
	}
	s.ctx, s.cron = ctx, c
	s.mu.Unlock()

	scheds, err := s.st.ListSchedules(ctx)
	if err != nil {
		s.stop()
		return fmt.Errorf("scheduler: load schedules: %w", err)
	}
	now := s.now()
	for _, sc := range scheds {
		// A run left "running" by a crashed bot: no process can still be
		// doing it once its timeout (and the grace) has passed.
		timeout := sc.Timeout
		if timeout <= 0 {
			timeout = s.cfg.Timeout
		}
		if n, err := s.st.InterruptStaleRuns(ctx, sc.ID, now.Add(-timeout-s.cfg.StopGrace-time.Minute), now); err != nil {
			s.log.Error("settle stale runs", "schedule", sc.ID, "err", err)
		} else if n > 0 {
			s.log.Warn("runs left running by a stopped bot recorded as interrupted", "schedule", sc.ID, "runs", n)
		}
		if sc.Paused {
			continue
		}
		e, err := s.register(sc, now)
		if errors.Is(err, ErrTooFrequent) {
			s.log.Warn("schedule not run: it fires more often than CLAUDEOPS_SCHEDULE_MIN_INTERVAL allows",
				"schedule", sc.ID, "spec", sc.Spec, "min_interval", s.cfg.MinInterval, "err", err)
			continue
		}
		if err != nil {
			s.log.Error("schedule not loaded", "schedule", sc.ID, "spec", sc.Spec, "err", err)
			continue
		}
		s.catchUp(ctx, e, now)
	}
	c.Start()
	s.log.Info("scheduler started", "schedules", len(scheds))
	<-ctx.Done()
	s.stop()
	return nil
}

// stop ends intake and waits for the workers.
func (s *Scheduler) stop() {
	s.mu.Lock()
	s.closing = true
	c := s.cron
	s.mu.Unlock()
	<-c.Stop().Done() // no more ticks; tick jobs (which only dispatch) done
	s.wg.Wait()
}

// register (re)installs sc's cron entry, its slots dealt with up to cursor.
// sc is normalized.
func (s *Scheduler) register(sc Schedule, cursor time.Time) (*entry, error) {
	sc, spec, err := s.Normalize(sc)
	if err != nil {
		return nil, err
	}
	anchor := sc.CreatedAt
	if anchor.IsZero() {
		anchor = cursor
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entryLocked(sc.ID)
	if e.cronID != 0 {
		s.cron.Remove(e.cronID)
		e.cronID = 0
	}
	e.sched, e.spec, e.loc, e.cursor = sc, spec.anchored(anchor), spec.Location(), cursor
	if s.cron != nil && !s.closing {
		id := sc.ID
		e.cronID = s.cron.Schedule(e.spec, cron.FuncJob(func() { s.tick(id) }))
	}
	return e, nil
}

func (s *Scheduler) entryLocked(id int64) *entry {
	e := s.entries[id]
	if e == nil {
		e = &entry{}
		s.entries[id] = e
	}
	return e
}

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
		if _, err := s.st.RecordRun(ctx, Run{ScheduleID: sc.ID, Slot: at, StartedAt: now, EndedAt: now,
			Status: store.RunMissed, Missed: int(missed), Error: msg}); err != nil {
			s.log.Error("record missed runs", "schedule", sc.ID, "err", err)
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
	runCtx, cancel := context.WithTimeout(ctx, sc.Timeout)
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

// finish records a claimed run's outcome, even after Run's context ended,
// and prunes old runs.
func (s *Scheduler) finish(r Run) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if err := s.st.FinishRun(ctx, r); err != nil {
		s.log.Error("record run", "schedule", r.ScheduleID, "slot", r.Slot, "status", r.Status, "err", err)
		return
	}
	if _, err := s.st.PruneRuns(ctx, r.ScheduleID, s.cfg.KeepRuns); err != nil {
		s.log.Error("prune runs", "schedule", r.ScheduleID, "err", err)
	}
}

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

// cronLogger adapts slog to cron.Logger; robfig's chatter goes to debug.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "err", err)...)
}
