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
// sure that neither it nor anything it started outlives the bot (spawn.go,
// keeper.go, tree.go; leftover.go ends what a crashed run left); other
// runners put it in a sandbox, a container, or a pod, and must keep the
// session's working directory at the same path, so that what Claude names
// there is what the bot sees, and keep the bot's state and secrets out.
//
// It knows nothing of chat platforms or users. Behaviour is pinned to what
// the real CLI does (shared/CLAUDE_CLI.md); the transcripts in testdata are
// its contract.
package claudeproc
