package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// SDK-hosted MCP servers (Options.SDKMCPServers): the CLI is told of each
// server by --mcp-config with "type":"sdk" and reaches it through the
// control protocol. Each JSON-RPC message the CLI has for the server comes
// as a control_request mcp_message (an MCPMessage event); the host answers
// it with RespondMCP. This rides on the stdin and stdout every runner
// already connects, so it works the same locally, in the sandbox and in a
// container. Measured on 2.1.330 (mcp_realcli_test.go; the lines in
// testdata/mcp-sdk-2.1.330.ndjson):
//
//   - --mcp-config alone declares the server: no initialize control
//     request is needed.
//   - After the first user message, before its turn's first model request,
//     the CLI sends initialize, notifications/initialized and tools/list,
//     and waits for the answers: the server is failed if the handshake
//     takes 30 s. That wait (the CLI's hold on a process's first model
//     request until its --mcp-config servers are connected) is what makes
//     the first request name the server's tools; the bot answers the
//     handshake at once, so a cold start is within noise of one without
//     the server (bot's BenchmarkColdStart). With the CLI's
//     CLAUDE_CODE_MCP_STARTUP_WAIT_MS=0 a host 1.5 s late is still waited
//     for (2.1.309, 2.1.330); it is not set (docs/PERFORMANCE.md).
//   - Notifications want an answer too: the CLI waits for every
//     control_response (an unanswered notifications/initialized stalls the
//     handshake). RespondMCP(id, nil) gives it.
//   - tools/call comes after can_use_tool allowed the call. The CLI sets
//     no timeout on it (a 130 s answer was taken): a slow upload is fine.
//     Interrupting the turn sends notifications/cancelled naming the
//     call's JSON-RPC id (no control_cancel_request); the late answer is
//     ignored.

// MCPMessage is a control_request mcp_message: one JSON-RPC message (a
// request or a notification) from the CLI to the SDK-hosted server Server.
// Answer it with RespondMCP, also when it is a notification. An
// mcp_message that names no server, names one not in
// Options.SDKMCPServers, or carries no JSON object never becomes an
// MCPMessage: the process answers it with an error itself.
type MCPMessage struct {
	RequestID string
	Server    string
	// Message is the JSON-RPC message as the CLI sent it: untrusted input
	// (the model chose the tool arguments in it).
	Message json.RawMessage
}

// Kind names the event.
func (*MCPMessage) Kind() string { return "control_request/mcp_message" }

// mcpConfig is the --mcp-config value declaring the servers as SDK-hosted.
func mcpConfig(servers []string) string {
	type sdkServer struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	m := make(map[string]sdkServer, len(servers))
	for _, s := range servers {
		m[s] = sdkServer{Type: "sdk", Name: s}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": m}) // strings only: cannot fail
	return string(b)
}

// mcpArgs are the flags that declare o.SDKMCPServers. They add servers:
// with a Guard, --strict-mcp-config still keeps every other configuration
// (.mcp.json, settings, ~/.claude.json) out.
func (o *Options) mcpArgs() []string {
	if len(o.SDKMCPServers) == 0 {
		return nil
	}
	return []string{"--mcp-config", mcpConfig(o.SDKMCPServers)}
}

// decodeMCPMessage reads an mcp_message request body. ok is false when it
// is malformed: then the caller keeps it as a plain ControlRequest, which
// the process refuses.
func decodeMCPMessage(requestID string, body json.RawMessage) (*MCPMessage, bool) {
	var w struct {
		ServerName json.RawMessage `json:"server_name"`
		Message    json.RawMessage `json:"message"`
	}
	if json.Unmarshal(body, &w) != nil {
		return nil, false
	}
	var server string
	if json.Unmarshal(w.ServerName, &server) != nil || server == "" {
		return nil, false
	}
	msg := bytes.TrimSpace(w.Message)
	if len(msg) == 0 || msg[0] != '{' {
		return nil, false
	}
	return &MCPMessage{RequestID: requestID, Server: server, Message: bytes.Clone(msg)}, true
}

// screenMCP answers, with an error, an mcp_message the host cannot take:
// malformed (kept as a ControlRequest by the decoder) or for a server this
// process does not host. It reports whether it did; such an event is not
// passed on. It runs on the reader: the answer is one short line, and the
// CLI reads stdin while it writes stdout, so the write does not wait on the
// reader.
func (p *Process) screenMCP(ev Event) bool {
	var id, why string
	switch e := ev.(type) {
	case *ControlRequest:
		if e.Subtype != "mcp_message" {
			return false
		}
		id, why = e.RequestID, "malformed mcp_message: want a server_name and a JSON-RPC message object"
	case *MCPMessage:
		if slices.Contains(p.opts.SDKMCPServers, e.Server) {
			return false
		}
		id, why = e.RequestID, fmt.Sprintf("no SDK MCP server %q here", e.Server)
	default:
		return false
	}
	p.log.Warn("claude: refused an mcp_message", "request", id, "why", why)
	if id == "" {
		return true // nothing to answer to
	}
	if err := p.RespondError(id, why); err != nil {
		p.log.Warn("claude: answer mcp_message", "request", id, "err", err)
	}
	return true
}

// mcpAck is what a notification is answered with: the CLI hands the
// answer to its MCP client, which takes a JSON-RPC result without an id
// as nothing to do (as the Agent SDKs answer).
var mcpAck = json.RawMessage(`{"jsonrpc":"2.0","result":{}}`)

// RespondMCP answers an MCPMessage: response is the server's JSON-RPC
// response to a request, or nil for a notification. It may be called from
// any goroutine, late (the CLI waits for it), and once per request.
func (p *Process) RespondMCP(requestID string, response json.RawMessage) error {
	if response == nil {
		response = mcpAck
	}
	if !json.Valid(response) {
		return errors.New("mcp response: not valid JSON")
	}
	if err := p.respond(requestID, map[string]any{"mcp_response": response}); err != nil {
		return fmt.Errorf("mcp response: %w", err)
	}
	return nil
}
