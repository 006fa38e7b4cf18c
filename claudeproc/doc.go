// Package claudeproc runs one Claude Code CLI process and speaks its
// stream-json protocol: it spawns `claude` with the stream-json flags, reads
// stdout with a tolerant NDJSON reader that turns each line into a typed
// Event, writes user messages, control responses and our own control
// requests through one serialized writer (multiplexed by request_id), caps
// line sizes, and shuts the whole process group down in bounded time.
//
// It knows nothing of chat platforms or users. Behaviour is pinned to what
// the real CLI does (shared/CLAUDE_CLI.md); the transcripts in testdata are
// its contract.
package claudeproc
