// Package thread is the face the bot's kernel (package bot) shows its
// extensions: what a feature such as workspaces, limits or schedules may
// ask of one chat thread, and the hooks the kernel calls around the
// thread's life.
//
// The kernel owns every thread: one worker goroutine runs the thread's
// session (its claude process), its view and its prompt desk, and is the
// only writer of the thread's record. An extension never sees the worker.
// cmd builds each extension and hands the list to the bot
// (bot.Config.Extensions); the bot calls Init once with its Host, and
// Attach on each thread's worker as the worker starts: the value Attach
// returns is the extension's part in that thread. The kernel finds a
// part's hooks by type assertion (each hook is an optional interface of
// this package) and calls them on the thread's worker goroutine, one at a
// time, so a part keeps its thread's state without locks. A part lives as
// long as the worker: a thread with nothing to do and no process lets its
// worker go, and its parts with it.
//
// An extension asks, it does not reach in: it reads its thread's key
// (Ref), its page on the platform (Link, through adapters.Linker: a pull
// request's description links back to it), a copy of the record
// (Thread.Record), its run and state, and changes the record by intent
// (SetWorkspace, BeginRun and EndRun, RemoveHome); it says things through
// the thread (Reply, Notice, Tell, Notify, PostFile) and records what
// people did (Audit); it interrupts the turn or stops the session
// (Interrupt, Stop), posts into the thread's own queue (Post), and sends
// Claude a message on a person's behalf (Send: a command that hands
// Claude outside text, such as `review`). It reads the store through
// Reader, never writing the kernel's tables (the kernel's one writer of a
// thread's record is worker.saveThread); a scheduled run's record goes
// back to the scheduler, which stores it. Extensions do
// not import each other nor package bot: what one needs of another goes
// through a value both see (Run, TurnEnd) or is connected by cmd.
//
// # Hooks, in the order the kernel calls them
//
// A message for Claude (a person's, one a part sends on a person's behalf:
// Thread.Send, or a run's: Thread.BeginRun):
//
//  1. PromptGate.BeforePrompt may refuse it; the kernel then tells the
//     thread why and audits it, and nothing reaches Claude.
//  2. Preparer.Prepare runs before a session starts (before attachments
//     are fetched, before a slot is waited for): it may give the thread
//     its workspace (the session's working directory) or refuse the
//     start.
//  3. Instructor.Instructions, once the session's slot is taken, gives
//     text for the session's system prompt (a channel's facts): the
//     parts' texts, joined in order, go to claude as one
//     --append-system-prompt after the bot's own, never into the
//     conversation. Before each later turn of a live session the kernel
//     asks again: a changed text, with the process between turns, ends
//     it, and the turn resumes the conversation under the new text.
//  4. Launcher.BeforeLaunch runs right after, just before claude starts:
//     it may add CLI arguments (a budget cap), MCP servers and plugin
//     directories (the operator's), directories for the runner to show (a
//     worktree's git directory), and the runner's image (a channel's).
//
// While the turn runs:
//
//  5. Asks.BeforeAsk is told of each tool call no rule settled, before
//     it is put before people: it may deny it (nobody is asked) or give
//     its prompt a deadline. Asks.Asked follows once the prompt is shown,
//     and Asks.Expired when nobody decided by the deadline.
//  6. Watcher.Watch runs after everything the worker handles (an input,
//     an event of the CLI, a posted message), with the thread's state.
//
// When the turn ends with a result, TurnEnder.AfterTurn runs for each
// part in the order of bot.Config.Extensions, sharing one TurnEnd: each
// reads what those before it wrote and adds its own (cmd lists limits,
// workspaces, schedules: the spend and its stop, then the change summary
// and a run's push, then the run's record). The kernel then stops the
// session if one asked it to (TurnEnd.Release).
//
// When the thread's claude process ends (it crashed, was stopped, idled
// out, or `new` ended it), Exiter.OnExit runs; when `new` ends the
// thread's conversation for good, Ender.OnEnd runs after the thread was
// told.
//
// On demand: Statuser.Status adds to what `status` and `cost` say;
// Receiver.Receive takes what was posted for the thread (Host.PostTo,
// Host.PostChannel, Thread.Post), on its worker, in the order posted;
// Clicker.Click takes a click on a prompt the part showed (Thread.Offer);
// Proposer.Propose takes a fact Claude proposed with the bot's tool
// remember (the kernel offers the tool where a part is a Proposer).
//
// On the Extension itself, not a part: Commander.Commands contributes rows
// to the bot's one command table, which dispatches commands (to the
// extension's part in the thread) and makes `help`; Sweeper.Sweep runs
// periodically on the bot's own goroutine, for work across threads;
// Recoverer.Recover runs once at start, for what a dead run left cut off
// (a command whose part called Thread.Settle is then its part's to tell).
//
// Within one hook point, parts are called in the order of
// bot.Config.Extensions.
//
// # Files
//
// thread.go: Extension, Host (the bot, as an extension sees it once:
// the clock, the log, the store's read queries as Reader, the settings,
// posting to a thread or a channel's threads, opening a thread), Thread
// (what a part may ask of its thread) and the values they carry (State,
// Run, Workspace, Prompt). hooks.go: the hooks above and the values they
// share (Launch, TurnEnd, Ask, Asked, Expiry, Status, Proposal). command.go: a row
// of the bot's command table (Command, Commander) and who may run it
// (Access).
package thread
