// Package mcptools is the bot's own MCP server, "claudeops", which each
// session's `claude` reaches through the control protocol (claudeproc's
// SDK-hosted MCP servers): the tools send_file (post a file of the
// session's workspace into its thread), read_thread (the thread's
// earlier messages) and remember (propose a fact for the channel: it
// stores nothing, a person accepts it). It is JSON-RPC logic only: it does no I/O beyond the
// workspace it is given and the functions of its Env, and knows no
// platform.
//
// Everything it gets from the CLI is the model's: untrusted. Paths stay
// inside Env.Dir (os.Root), the file comment is made plain text, and the
// thread's text goes back to the model only, as tool output.
//
// # Files
//
// server.go: Env, Server and the JSON-RPC it answers (initialize,
// tools/list, tools/call); tools.go: the tools' table; sendfile.go:
// send_file (a file below the session's working directory, opened
// through os.OpenRoot, never one the session's runner hides from it,
// within the platform's limit); readthread.go: read_thread (the thread's
// earlier messages, with authors); remember.go: remember (a proposal,
// made plain, one line, bounded); plain.go: text made plain.
//
// The CLI reaches it as an SDK-hosted server over the control protocol
// (claudeproc/mcp.go); the bot answers each request off its worker's
// goroutine (bot/mcp.go) and decides which send_file calls a person is
// asked about (bot/sendfilepolicy.go).
package mcptools
