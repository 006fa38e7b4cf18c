package approvals

import "encoding/json"

// What each tool's rules read, and what a grant on it may store.

// ToolMonitor runs a shell command in the background and streams its
// output (or watches a WebSocket).
const ToolMonitor = "Monitor"

// commandTools run the shell command held in the named input field. Their
// rules are command rules: matched by the Bash matcher, derived like
// Bash's, and a Bash deny rule denies the same command through any of them.
var commandTools = map[string]string{
	ToolBash:    "command",
	ToolMonitor: "command",
}

// isCommandTool reports whether tool runs a shell command (commandTools).
func isCommandTool(tool string) bool { _, ok := commandTools[tool]; return ok }

// toolCommand returns the command a command tool's call runs; ok is false
// for other tools and for an input without the field (a Monitor call that
// opens a WebSocket, an unreadable input).
func toolCommand(tool string, input json.RawMessage) (string, bool) {
	field, ok := commandTools[tool]
	if !ok {
		return "", false
	}
	fields, ok := decodeObject(input)
	if !ok {
		return "", false
	}
	return stringField(fields, field)
}

// wholeToolGrants are the tools a grant may store by their bare name: a
// call of them can neither run a program nor change a file, whatever its
// input. Every other tool is described by a pattern (commands, paths,
// hosts) or not at all: a tool not listed here, MCP tools and tools a
// newer CLI adds included, is allowed once at a time.
var wholeToolGrants = map[string]string{
	ToolWebSearch: "sends a search query and reads the results",
}
