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
	InterruptRunningRuns(ctx context.Context, now time.Time) ([]store.ScheduleRun, error)
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
	// Timers time each run's timeout; nil: the runtime's
	// (context.WithTimeout). A test that gives Timers and Now of its own
	// clock decides when a run's time is up, whatever the machine's load.
	Timers Timers `env:"-"`
	// Logger; default slog.Default().
	Logger *slog.Logger `env:"-"`
	// Observer is told how runs end (observe.go); default: nobody.
	Observer Observer `env:"-"`
	// OwnsDatabase: no other process runs schedules on this database (cmd
	// holds the one-bot lock). Run then settles every run left running as
	// interrupted at once (settleRunning); without it, only those past
	// their timeout, which no live process can still be doing.
	OwnsDatabase bool `env:"-"`
}

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
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
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
// validated as Add would: the slots the scheduler runs, an "@every d"
// schedule's counted from its creation (anchorOf), not from now.
func (s *Scheduler) Next(sc Schedule, n int) ([]time.Time, error) {
	_, spec, err := s.Normalize(sc)
	if err != nil {
		return nil, err
	}
	now := s.now()
	sched := spec.anchored(anchorOf(sc, now))
	var out []time.Time
	for t := now; len(out) < n; {
		if t = sched.Next(t); t.IsZero() {
			break
		}
		out = append(out, t.In(spec.Location()))
	}
	return out, nil
}

// anchorOf is where an "@every" schedule's slots are counted from: its
// creation, as robfig/cron counts from when an entry is added (and every
// process then agrees); cursor for one not stored yet.
func anchorOf(sc Schedule, cursor time.Time) time.Time {
	if sc.CreatedAt.IsZero() {
		return cursor
	}
	return sc.CreatedAt
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
	if s.cfg.OwnsDatabase {
		s.settleRunning(ctx, now)
	}
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
			s.cfg.Observer.ScheduleRuns(string(store.RunInterrupted), int(n))
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

// settleRunning ends the runs a stopped bot left running as interrupted,
// of every schedule, each with its cost where the CLI had reported its
// result; it is told to the Observer, as the run's end was not.
func (s *Scheduler) settleRunning(ctx context.Context, now time.Time) {
	runs, err := s.st.InterruptRunningRuns(ctx, now)
	if err != nil {
		s.log.Error("settle the runs a stopped bot left running (again at the next start)", "err", err)
	}
	for _, r := range runs {
		s.log.Warn("run left running by a stopped bot recorded as interrupted", "schedule", r.ScheduleID, "slot", r.Slot,
			"thread", r.ThreadKey, "cost_usd", r.CostUSD, "why", r.Error)
	}
	if len(runs) > 0 {
		s.cfg.Observer.ScheduleRuns(string(store.RunInterrupted), len(runs))
	}
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
	anchor := anchorOf(sc, cursor)
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

// cronLogger adapts slog to cron.Logger; robfig's chatter goes to debug.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "err", err)...)
}
