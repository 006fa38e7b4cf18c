// Package scheduled is the extension (package thread) that runs a
// schedule's prompt in a thread: the thread-side of package scheduler,
// and the `schedule` commands.
//
// The scheduler runs prompts through its Runner; the bot is that Runner and
// hands each run to this extension (RunScheduled), which opens a thread in
// the schedule's channel, posts the run to the thread's worker, and waits
// for the end of its turn, or for its time to be up (the turn is then
// interrupted). In the thread (Receiver) the run begins as an unattended
// prompt on behalf of the schedule's creator (thread.Thread.BeginRun): its
// first line names the schedule, and a scheduled run's budget applies.
// A run takes its channel's settings (package settings) as they are at run
// time, as any session does at its launch: budget.schedule_run, the
// instructions, and the model unless the schedule names one (the model its
// creating thread had chosen with `model`, stored with it); nothing of
// the settings is copied into the schedule.
//
// Nobody may be watching a run's thread. By default its tool calls that no
// allow rule settles are denied (Asks.BeforeAsk), audited and told. A
// schedule added with --park puts them before people instead: its
// creator is notified (a live mention where the platform has one), and a
// parked request is denied at the approval timeout or the run's end,
// whichever comes first, and the run goes on.
//
// When the run's turn ends (TurnEnder, after the limits and workspaces
// hooks) its record gets the result, cost, tokens, branch and commit, and
// the process is freed unless people wrote in the thread meanwhile (the
// CLI answers them next); a process that ends mid-run (Exiter) fails the
// run. People can reply in the thread afterwards.
//
// A trigger's event (package triggers, connected by cmd) runs the same
// way (RunTriggered): a new thread, the channel's settings at run time,
// on behalf of "trigger:<name>", nobody in the chat; its run is never
// parked (its sender is nobody to ask) and its prompt's first line names
// the trigger. `triggers` and `triggers runs <name>` show a channel's
// triggers and their runs (Triggers, connected by cmd).
//
// `schedule add|list|runs|run|pause|resume|rm` manage schedules through
// the scheduler (Scheduling, connected by cmd); a schedule is changed by
// its creator or an admin, and CLAUDEOPS_MAX_SCHEDULES_PER_USER caps what
// one user (not an admin) may add.
//
// # Files
//
// scheduled.go: Config, the Scheduling and Repos it is connected to by
// cmd (a schedule's --push asks the workspaces extension through Repos),
// the Extension and RunScheduled. part.go: a run in its thread (begun,
// ended, failed) and the unattended policy. parked.go: the park policy (a
// deadline, the creator notified, denied at it). commands.go: the
// `schedule` commands and the per-user cap. triggers.go: the `triggers`
// commands.
package scheduled
