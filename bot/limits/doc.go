// Package limits is the extension (package thread) that bounds what a
// thread's turns may take: time and money. It owns the turn clock and the
// spend budgets; the kernel knows neither.
//
// The turn clock (clock.go) times a running turn against
// CLAUDEOPS_TURN_TIMEOUT, paused while a prompt of the thread waits for a
// person (that wait has its own deadline, and a person who decides within
// it must not find the turn killed under them). When it fires the turn is
// interrupted, and a turn still running after the stop grace is ended by
// closing its process.
//
// The budgets (budget.go): before a prompt, the stored spend decides (each
// finished turn's cost, as its result reported it): a thread or channel at
// or over its budget refuses the message, and nothing reaches Claude.
// During a turn the CLI decides: each process is started with
// --max-budget-usd set to what is left of the tightest budget that applies
// (the CLI checks it after every model request and ends the turn with an
// error_max_budget_usd result, running no further tool). A live process's
// cap goes stale when another thread of the channel spends, or the day
// turns: before each prompt it is compared with what is left, and a
// process whose cap differs is restarted (resumed) with the new one. When
// a turn leaves the channel over its budget, the channel's other running
// turns are stopped. Budgets bind everyone, admins and the console's
// operator too: they are the operator's setting, not a permission.
//
// Which budgets apply (scopes.go) is the thread's channel's settings
// (budget.thread, budget.channel_day, budget.schedule_run; package
// settings, read through Host.Scopes at each check, so a change applies at
// the next prompt or launch), else the bot's configuration (Config). A
// channel's budget applies in that channel only. A channel admin may only
// tighten a budget (settings.Tighten); a value of theirs that is not
// tighter than what applies without it (the wider scopes', else Config's)
// is held to that. The refusals, `status` and `cost` say where each budget
// comes from.
//
// Hooks (thread): PromptGate (the gate, then the recap), Launcher (the
// cap), TurnEnder (the spend, and why a limit stopped the turn), Watcher
// (the clock), Receiver (the clock firing; another thread's spend),
// Statuser (the budgets in `status` and `cost`).
//
// # Files
//
// limits.go: Config (CLAUDEOPS_TURN_TIMEOUT and the
// CLAUDEOPS_BUDGET_{THREAD,CHANNEL_DAY,SCHEDULE_RUN}_USD budgets, given by
// cmd; PutSettings gives them to the settings as the bot's scope), the
// Extension and its part's attachment. scopes.go: the budgets that apply
// in a thread's channel. part.go: the part's
// hooks. clock.go: the turn clock. budget.go: the spend, the gate, the
// --max-budget-usd cap and its restart when stale, the budgets' text.
package limits
