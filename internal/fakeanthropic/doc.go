// Package fakeanthropic is a fake Anthropic Messages API for driving the real
// Claude Code CLI offline in tests (written against 2.1.330, used with every
// version scripts/test runs).
//
// Start a Server with a Script, point the CLI at it with
// ANTHROPIC_BASE_URL=<Server.URL>, and inspect the requests the CLI sent with
// Server.Requests / Server.WaitRequests. POST /v1/messages is answered (the
// CLI adds "?beta=true"), and so is the connection warm-up older CLIs
// (2.1.100 … 2.1.289) send at start, HEAD /api/hello: 200 and no body,
// counted by Preflights and not recorded as a model request; and so is
// POST /v1/messages/count_tokens (the CLI's /context counts a session's
// instruction files and tools with it), answered with an estimate and
// counted by TokenCounts. The CLI's summarization request (/compact) is a
// model request like any other: Request.IsCompaction tells it, and the
// Script's answer is the summary the compacted history holds. Any other
// request gets a 404 and fails the test at cleanup. Streaming replies follow
// the SSE sequence the CLI accepts (every event has an "event:" line), as
// the Messages API streams them.
//
// Files: server.go (Server, Script, the requests recorded), request.go
// (what the CLI sent, decoded), reply.go (Reply and its blocks, streamed
// as SSE), chat.go (scripts for a chat: text replies, a question, a long
// answer).
package fakeanthropic
