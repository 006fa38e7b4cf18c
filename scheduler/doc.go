// Package scheduler runs recurring prompts on robfig/cron/v3: schedules
// persisted in the store and reloaded at start, an overlap policy, timeouts,
// catch-up after downtime, each (schedule, time) claimed once, and results
// posted and stored. It runs prompts through a small Runner interface that
// bot satisfies.
//
// Invariants:
//
//   - A slot is one scheduled time of one schedule. Before a slot runs it is
//     claimed in the store (UNIQUE (schedule_id, slot)), so it runs at most
//     once however many processes share the database. Slots are absolute:
//     cron specs by their fields, "@every d" anchored at the schedule's
//     creation (anchor + k·d), so every process computes the same ones.
//   - Every claimed slot ends in one final status: succeeded, failed
//     (runner error or panic), timed_out (its context deadline passed),
//     skipped (overlap policy), interrupted (shutdown), or missed. A run a
//     stopped process left "running" is interrupted by the next start: at
//     once when Config.OwnsDatabase says no other process can be doing it
//     (cmd holds the one-bot lock), with the cost of its thread's turn
//     where the CLI had reported its result; else once its timeout has
//     passed. A run's record the storage refuses (a full disk) is tried
//     again with a backoff bounded at 30s while the scheduler runs.
//   - A panicking or failing runner never stops the scheduler: the runner's
//     own goroutine recovers, and cron.Recover is installed explicitly
//     (robfig's default chain is empty) as a second net.
//   - A runner whose context has ended gets Config.StopGrace to return;
//     then its run is recorded without it and its goroutine is abandoned.
//   - Catch-up at Run: the slots since the schedule's last recorded slot
//     (or its creation or last change, if later) are counted; the latest
//     runs once if it is no older than the catch-up window, and the rest are
//     recorded as ONE 'missed' row whose Missed field counts them. The count
//     is exact for "@every" (arithmetic) and up to 100,000 slots for cron
//     specs (a lower bound beyond). A tick that finds more than one due slot
//     (a clock jump or a stalled process) does the same with a zero window.
//     Paused schedules are neither run nor caught up.
//   - The overlap policy holds within one process: a second process on the
//     same database may run a schedule's next slot while this one still runs
//     the previous.
//   - No schedule runs more often than Config.MinInterval
//     (CLAUDEOPS_SCHEDULE_MIN_INTERVAL, default 5m), admins' included. It is
//     checked in Normalize, so at Add, at load, on resume, on RunNow and by
//     Next: "@every d" by d, a cron spec by the gaps between its next 10,000
//     firings (at most a year ahead, DST changes included). A stored row
//     below it (written past Add, or before the minimum was raised) is kept
//     but not run, with a logged warning; it cannot be resumed or run by
//     hand until the minimum allows it.
//   - DST follows robfig/cron: a wall time that does not exist (02:30 on a
//     spring-forward day in Europe/Berlin) has no run that day; one that
//     happens twice (02:30 on the fall-back day) runs twice.
//   - Time comes from Config.Now, which must agree with the runtime clock
//     that robfig's timers use; tests run in testing/synctest bubbles. A
//     run's timeout is timed by Config.Timers when set: a test whose clock
//     gives Now and Timers says when a run's time is up.
//
// # Files
//
// scheduler.go: Schedule, Run, the Runner and Store it needs, Config
// (its env tags, read by cmd), New. spec.go: cron specs and "@every",
// parsed and their slots. manage.go: add, reload, pause, remove, run now.
// runs.go: a slot claimed, run and recorded. deadline.go: a run's
// context, its timeout on Config.Timers. catchup.go: the slots missed
// while no process ran. observe.go: Observer, told of runs for the
// metrics.
package scheduler
