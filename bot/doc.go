// Package bot is the kernel of claudeops: it routes chat events to one
// worker per thread, keeps one Claude Code session per thread (start,
// resume, reap idle ones, cap live processes, queue follow-ups), turns a
// turn's events into platform-neutral messages, puts Claude's requests
// before people, and runs the thread's own commands (status, stop, new,
// mode, model, cost, cwd, rules). Features of threads beyond that —
// workspaces, limits, schedules — are extensions (package thread) that
// cmd hands in through Config.Extensions; the bot imports none of them.
//
// It depends on adapters (the port), claudeproc, approvals, store and the
// face (bot/thread), and on no concrete chat platform.
//
// # Parts
//
// Bot (bot.go, config.go) takes deliveries and owns the workers. A worker
// (worker.go, events.go, asks.go) is one thread's goroutine and event loop;
// it owns three parts, each given a deps (deps.go: the thread, its adapter,
// the store, the approvals registry, the slots, the clock, a logger, the
// configuration) instead of the Bot:
//
//   - the session (session.go): the claude process, started or resumed in
//     a slot, stopped, and the first prompt of a resumed process, sent
//     again in a fresh session when the resume fails;
//   - the view (view.go, tools.go): the running turn's text and the tool
//     lines as adapter Messages and Edits; no store, no process;
//   - the desk (desk.go, typed.go, prompttext.go): the open approvals and
//     questions; a click or typed reply comes back as a verdict, which the
//     worker applies (answers the CLI, writes the store, edits the prompt).
//
// Extensions (package thread) see a thread only through its face: the
// worker attaches each extension's part as it starts (hooks.go), shows it
// face.go (what a part may ask of its thread) and host.go (of the bot),
// and calls its hooks at the points package thread orders. The commands
// are one table, the bot's (commands.go): the kernel's rows, whose
// handlers are in cmd_thread.go and cmd_channel.go, and the extensions'.
//
// # Invariants
//
//   - One goroutine per thread owns its state: the thread's record, its
//     session, view, desk, queued messages and its extensions' parts are
//     touched only by its worker, input by input in arrival order, without
//     locks. Other goroutines reach a thread only through its mailbox
//     (Bot.toWorker), or a part's own queue (thread.Thread.Post); the
//     worker's idle flag and input count are atomics, and Bot.mu guards
//     the map of workers.
//   - Only the kernel writes a thread's record: an extension reads a copy
//     and asks by intent (set the workspace, begin a run, remove the CLI's
//     home); it never holds the worker, the session or the store's writer.
//   - Deliver admits an event only from a user who may use the bot in the
//     event's channel (settings.Resolver.MayUse: the users and admins the
//     settings name there, CLAUDEOPS_ALLOWED_USERS at the bot's scope, bot
//     admins); a refused mention or click is audited and told. A
//     message is recorded, keyed by the message's identity (Slack: team,
//     channel, ts; Matrix: event id), before it is queued, and a message
//     already recorded is not queued again: Slack sends one post twice
//     (message, app_mention) and redelivers what was not acked, and the
//     key makes each post one turn. A message
//     without a mention in a thread the store does not know is dropped, and
//     so is every one without a mention where the channel's reply setting
//     is "mention" (never recorded, so never a turn).
//   - An admin is an admin of the thread's channel (its admins setting) or
//     a bot admin (CLAUDEOPS_ADMINS): nothing a channel's admins may do
//     reaches another channel. A thread is changed (mode, model, new,
//     stop, deciding its prompts) only by its starter or such an admin
//     (approvals.Registry.MayDecide, with the request's channel); others
//     are refused, audited and told. "Always allow" (a channel rule) is an
//     admin's: the starter's choice is downgraded to the thread grant, or to
//     once. The channel's rules are changed by its admins only (a rule of
//     every channel by bot admins), its working directory by bot admins, a
//     schedule by its creator or an admin.
//   - A prompt is decided once: the registry takes the first valid decision,
//     and exactly one control_response answers the request. A request is
//     stored before it is shown; one that cannot be shown is denied. A
//     process's requests are expired when it ends, and at start Recover
//     expires those a previous run left pending: their prompts and tool
//     lines both show it, from the places stored with each request.
//   - A turn's final text always lands: its result, the process exiting
//     mid-turn and stop each show all the turn's text as final before the
//     footer or the notice that ends it.
//   - A text is final as soon as the CLI's complete assistant line for it
//     arrives (one per content block), not at message_stop or the result:
//     the last words wait for no edit pacing.
//   - A message sent while a turn runs goes to the CLI at once (the CLI
//     queues it); the thread shows it queued, then taken up.
//   - stop says "Stopping." as soon as it is accepted, before the CLI
//     confirms, interrupts the turn and closes its prompts; if the
//     interrupt fails the same notice is edited to say so, and nothing
//     says the turn stopped; it is edited too to count the queued
//     messages dropped.
//   - Files are fetched only on the thread's worker, for a message that goes
//     to Claude: after Deliver checked the sender, after the thread was
//     loaded, after commands, typed decisions and the per-user quota had
//     their turn. Each is capped at 20 MiB and saved with O_EXCL under
//     attachments/<thread hash>/ in the working directory, reached without
//     following a symlink.
//   - A working directory that is / or holds (or lies in) the bot's own state
//     is refused by `cwd` and again at every start of claude.
//   - A message whose first word is a command word is a command and never
//     reaches Claude; one that does not parse gets its usage back. A
//     one-word typo of a command the sender may run is asked about and
//     never reaches Claude either, unless a backslash begins it.
//   - A prompt is the sender line, "[from <name> · <id>]" (policy.go),
//     then the text; the system prompt says how to read that line.
//   - A slash command reaches the CLI as it is only when the session's CLI
//     lists it and slash.go allows it to the sender; one of the
//     repository's own commands or skills, which the guarded CLI does not
//     load, the bot expands into the message the CLI would make of it
//     (claudeproc.RepoCommand): what would change the
//     session's permissions, directories, settings or credentials is
//     refused before any process starts, an unknown name is said and sent
//     nowhere, and each one is audited.
//   - One session, one process: every local or sandboxed claude is recorded
//     in the store while it runs (recover.go, leftovers.go), and at start,
//     before any session resumes, Recover ends what a previous run left
//     (only a process whose identity still matches), closes its unfinished
//     turns as interrupted and tells each such thread once. Recover relies on
//     the one-bot-per-database lock being taken before it runs.
//   - What a thread is shown is what the store records: a turn's end (its
//     result, cost, tokens) and the settlement of the messages it took up
//     are written before its footer is shown; one the storage refuses is
//     owed by the worker, tried again with a bounded backoff on its own
//     loop and once more as it stops, a full disk first giving back the
//     store's reserve (records.go). A turn left without a recorded end is
//     told at the next start as not known to have finished, never as cut
//     off. A scheduled run's thread is recorded as the run begins, so the
//     start that settles a run left running finds its turn's cost.
//   - No message taken in is lost unsaid: Deliver records it (and so it is
//     acked) before a worker sees it; it is settled when a turn takes it
//     up, when it was a command or a click, or when its thread was told why
//     not (settle.go). One a restart caught unsettled is not run: Recover
//     tells its thread to send it again.
//   - A message refused because the storage fails (store.FaultCause:
//     damaged, read-only, full, I/O) is said once per cause in the log
//     (Config.Faults), and once per outage to each thread it refuses
//     (storage.go); a write taken after it logs that storage works again.
//   - A turn is bounded, when cmd gives the bot the limits extension
//     (bot/limits): by CLAUDEOPS_TURN_TIMEOUT of its own time (the clock
//     stops while a prompt waits for a person, whose wait the approval
//     timeout bounds), and by the spend budgets: a thread or channel over
//     budget refuses the message before anything reaches Claude, and a
//     running process carries --max-budget-usd of what is left.
//
// # Files
//
// The bot and its workers:
//
//   - bot.go: Bot, New, the adapters it posts through, Deliver (the
//     sender checked, the message recorded by its identity, queued for its
//     thread's worker; only then is the delivery acked), Run and the
//     shutdown.
//   - config.go: Config (the extensions among it) and its defaults.
//   - worker.go: the worker, one thread's goroutine: its inputs, its loop,
//     its idling out.
//   - deps.go: deps, what a part is handed instead of the Bot (the view's
//     ticker among it), and how a part says things (reply, notice, tell,
//     audit); storage.go: the storage failing, told once (the log, each
//     thread).
//   - hooks.go: the extensions' parts attached to a worker, and their hooks
//     called in package thread's order.
//   - face.go, host.go: the thread.Thread a part sees, and the thread.Host
//     its extension sees (the bot stays the scheduler's Runner and hands
//     each run to the extension that runs them).
//
// The session and the turn:
//
//   - session.go: the claude process (start, or `--resume <id>` when the
//     thread had a session, through the runner; stop; the first prompt of
//     a failed resume sent again in a fresh session). A reaped or crashed
//     thread resumes from the CLI home its runner keeps for it alone
//     (removed by `new`): to the user a thread never forgets.
//   - instructions.go: what the session appends to the CLI's system prompt:
//     the bot's words (how to read the sender line), then the parts'
//     instructions (thread.Instructor) joined in list order with a blank
//     line between, cut at 16 KiB with a note (logged), inside a
//     <channel-instructions> section the text cannot close; one
//     --append-system-prompt argument (no shell: every runner passes the
//     argv as it is), rendered afresh at every start and resume
//     (claudeproc's --system-prompt-snapshot off); never the conversation,
//     never the environment. A changed text ends a
//     live process between turns, and the turn resumes under it.
//   - events.go: the CLI's events on the worker (init, result, exit), a
//     turn ended abruptly.
//   - slots.go: the capped number of live processes, idle ones evicted
//     least recently used first, the rest waiting in a FIFO queue.
//   - quota.go: the per-user thread quotas (the channel's quota setting).
//   - launch.go: the model, mode and effort a session starts with (the
//     thread's own, else its channel's settings); instructions.go: the
//     channel's instructions setting and the parts' texts for the system
//     prompt.
//   - view.go, tools.go: the turn's view, text and tool lines as
//     platform-neutral messages (one live message per assistant message,
//     a compact line per tool call, which says so while it waits for a
//     decision; the result's footer: time, cost, turns), posted through the thread's adapter,
//     whose calls never wait on the platform (the Slack and Matrix
//     adapters queue them in adapters/outbox's mailroom; mailroom.go: what
//     the bot asks of one).
//   - firsttext.go: when each turn's first text reached the platform, for
//     the metrics (observe.go: the Observer, told what sessions do).
//   - turnlog.go: the running turn's record id on the thread's log lines.
//   - attach.go: attachments, fetched only now, capped, saved under
//     attachments/<thread hash>/ without following a link.
//   - homes.go: `new` removes the thread's CLI home, through the runner's
//     optional RemoveHome.
//   - mcp.go: the bot's own tools (bot/mcptools) answered off the worker's
//     goroutine (a fact Claude proposes goes to the parts, thread.Proposer);
//     sendfilepolicy.go: which send_file calls a person is
//     asked about.
//
// Prompts before people:
//
//   - desk.go: the open approvals and questions; deciding returns a
//     verdict.
//   - asks.go: a can_use_tool request (a deny rule wins; an allow rule,
//     or the thread's acceptEdits mode for an edit inside the working
//     directory, may settle it at once, never for a protected place; else
//     the desk, whose prompt offers what approvals.GrantChoices allows); a
//     verdict applied once: the CLI answered (a control_response; an
//     AskUserQuestion's answers in updatedInput.answers), the store
//     written, the prompt updated, a grant's rule saved.
//   - prompttext.go: a prompt's text and the choices it offers;
//     typed.go: typed decisions ("allow 2").
//   - unverified.go: an event the platform cannot vouch for
//     (Event.Unverified) decides nothing and runs no command.
//   - policy.go: who may change a thread, the sender header, the modes, the
//     deny rules handed to the CLI; builtinrules.go: the rules the bot
//     brings (its own tools run unasked, a deny rule wins).
//
// Commands: commands.go (the one table, dispatch, `help` with the lines
// the platform takes itself; a one-word typo of a command asked about,
// never sent, and the backslash that sends any text to Claude),
// didyoumean.go (how far a word is from a command as slips of the finger),
// cmd_thread.go
// (status, stop, new, mode, model, cost), cmd_channel.go (cwd, rules).
// slash.go: Claude Code's slash commands from chat (which the CLI lists,
// who may send which); slashpart.go: the thread's part that decides each,
// tells and audits refusals, and holds one while a turn runs.
//
// Restarts: leftovers.go records each local or sandboxed process while it
// runs, and Kill ends every session at once (the forced exit), through
// live.go's set of the sessions' processes not seen ending yet;
// recover.go (Recover, at start) ends what a previous run left,
// expires its pending approvals, closes its unfinished turns and tells
// their threads; restartlines.go (lineBook, a part of the worker) stores
// where a request's tool line is beside its prompt, and each tool line
// running (the platform's ref, a mailroom's resolver), and Recover ends
// them at the next start; settle.go settles a message taken in, and
// Recover tells the threads of those a restart caught unsettled; records.go owes what the
// storage refused of what a thread was shown (a turn's end, a message's
// settlement) until it is written.
package bot
