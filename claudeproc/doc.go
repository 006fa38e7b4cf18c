// Package claudeproc runs one Claude Code CLI process and speaks its
// stream-json protocol: it spawns `claude` with the stream-json flags, reads
// stdout with a tolerant NDJSON reader that turns each line into a typed
// Event, writes user messages, control responses and our own control
// requests through one serialized writer (multiplexed by request_id), caps
// line sizes, and shuts the whole process group down in bounded time.
//
// Where the process runs is a Runner's business: the protocol engine
// (Process) only needs the CLI's stdin, stdout and stderr. A runner starts
// the CLI with those three pipes, names it in logs, signals everything the
// session started and reaps it. Local runs it as a child process of the
// bot, as the bot's user, in a session of its own (the default), and makes
// sure that neither it nor anything it started outlives the bot (the
// spawning thread and keeper of internal/proc, which git's supervision
// shares; tree.go; leftover.go ends what a crashed run left); other
// runners put it in a sandbox, a container, or a pod, and must keep the
// session's working directory at the same path, so that what Claude names
// there is what the bot sees, and keep the bot's state and secrets out.
//
// It knows nothing of chat platforms or users. Behaviour is pinned to what
// the real CLI does: the transcripts in testdata (cli-2.1.330, recorded
// from the real CLI) are its contract. Where versions differ the tests
// accept each form: a message sent while a tool runs joins the same turn,
// and the model gets it as a message of role "system" from 2.1.309 and
// 2.1.330, as a text block beside the tool result from 2.1.332
// (TestRealCLIMessageInjectedIntoToolStep); every result carries the
// turn's own usage, model_usage_since_last_result, which the budgets rely
// on (TestRealCLITurnUsage).
//
// # Files
//
// The protocol:
//
//   - process.go: Process, one CLI's run (Start, its events, its exit);
//     options.go: Options and the command line (--model, --effort,
//     --append-system-prompt with --system-prompt-snapshot off: by default
//     the CLI sends a resumed conversation the system prompt of its first
//     request; TestRealCLIResumedSystemPrompt shows both settings on the
//     real CLI); guard.go: the launch
//     guard (--permission-mode, --restricted, --setting-sources "",
//     --strict-mcp-config, the deny rules in --settings, the repository's
//     instructions by --add-dir); repoagents.go: the repository's
//     subagents read for --agents, only what describes them; tools.go: every
//     built-in tool classified governed, inert or off, and what --tools
//     offers; repocommands.go: one of the repository's own slash commands
//     or skills, which the guarded CLI does not load, made into the
//     message the CLI would make of it (RepoCommand); reposkills.go: the
//     repository's skills built as a plugin the model may call (repo:<name>),
//     only what describes them, shown read-only (a Mount, MountChecker);
//     operatorplugins.go: the operator's plugins, never given whole: their
//     skills built beside the repository's (<plugin>:<name>), their agents
//     read; skillcalls.go: the process answers the model's Skill calls
//     itself.
//   - reader.go: the tolerant NDJSON reader, its line cap (10 MiB by
//     default); jsonscan.go: a line's type found without decoding it;
//     decode.go, decode_stream.go, fastuser.go: lines to typed Events
//     (events.go), streamed blocks reassembled, tool output walked by
//     hand; queue.go: the reader kept apart from a busy consumer;
//     refuse.go: what cannot be passed on is answered at once — a
//     control request over the line cap (read from its head: the CLI
//     writes type, request_id, then the request's subtype and tool_name
//     before its input) or not valid JSON denied or refused, one of an
//     unknown subtype answered with an error; shorten.go: a result line over the cap
//     read from a copy with its strings cut (the turn must end).
//   - writer.go: user messages, control responses (allow, deny) and our
//     own control requests (interrupt, set_permission_mode, set_model,
//     initialize); control.go: their request_id multiplexing; mcp.go: the
//     SDK-hosted MCP server's messages (--mcp-config with "type":"sdk");
//     mcpservers.go: the operator's MCP servers, read by the CLI from a
//     pipe (--mcp-config /dev/fd/3), never from its command line or
//     environment; a runner in an image writes them on the first line of
//     stdin to ImageLauncher, which makes that pipe in the container.
//   - env.go: the child's environment, an allowlist (BuildEnv): never the
//     bot's chat secrets (no SLACK_*, MATRIX_* or CLAUDEOPS_* variable);
//     version.go: the CLI's version and whether it is
//     supported (CheckVersion); shutdown.go: bounded shutdown.
//
// Where it runs:
//
//   - runner.go: the Runner seam (Spec, Session, Handle) and Local, a
//     child process in a session of its own; sandbox.go: Sandbox,
//     bubblewrap; view.go: Viewer, what a runner hides from a session;
//     mounts.go: Mount, the directories beside the working directory a
//     session is shown (a worktree's git directory), nested parents first.
//   - homes.go: a thread's CLI home of its own (Session.HomeKey; Local with
//     a HomeBase sets CLAUDE_CONFIG_DIR per thread; RemoveHome).
//   - runner.go: every local child forked from one thread that never exits,
//     with a parent-death signal, and a keeper that then ends it with every
//     process under it (both internal/proc's); tree.go: signals to that
//     whole tree;
//     procid.go: processes named across pid reuse by start time and boot
//     id; leftover.go: what a dead run left ended at the next start, if
//     provably the same.
//   - settings.go: each runner's configuration as one type with its env
//     tags (LocalSettings, SandboxSettings; docker.Settings and
//     kubernetes.Settings in theirs) that checks itself against the bot's
//     Host, builds its runner, names the directories it owns and whether an
//     image holds the CLI (SandboxSettings.Works: whether bubblewrap can
//     make the sandbox here, which the bot's default runner depends on); imageversion.go: that image's CLI checked, as
//     CheckVersion does.
package claudeproc
