package main

// Exit codes, the only ones the process uses (sysexits.h where one fits;
// docs/OPERATIONS.md and operators' restart policies rely on them).
const (
	exitOK       = 0
	exitFailure  = 1   // a run-time failure: the store, a platform, a stuck shutdown
	exitUsage    = 2   // an unknown command (as Go's flag package does)
	exitNotFound = 72  // EX_OSFILE: the claude CLI is not at CLAUDEOPS_CLAUDE_BIN, and nothing else is wrong
	exitConfig   = 78  // EX_CONFIG: bad configuration (every problem listed), a CLI older than supported, or a database another bot holds
	exitForced   = 130 // a second SIGINT or SIGTERM during the shutdown forced the exit (128+SIGINT, as a shell reports Ctrl-C): sessions killed, nothing drained
)
