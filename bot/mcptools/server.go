package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/claudeops/claudeops/adapters"
)

// ServerName is the MCP server's name: in the CLI's --mcp-config and in
// the names the CLI gives its tools.
const ServerName = "claudeops"

// Tool names as the CLI calls them (and as permission rules name them).
const (
	SendFileTool   = "mcp__" + ServerName + "__" + sendFileName
	ReadThreadTool = "mcp__" + ServerName + "__" + readThreadName
	RememberTool   = "mcp__" + ServerName + "__" + rememberName
)

const (
	sendFileName   = "send_file"
	readThreadName = "read_thread"
	rememberName   = "remember"
)

// Env is what the tools of one session may reach.
type Env struct {
	Dir     string // the session's workspace: send_file reads only files below it
	MaxFile int64  // the platform's limit (adapters.FilePoster.MaxFileBytes); 0 = cannot post files
	// Post posts a file into the session's thread; nil: this platform
	// cannot post files.
	Post func(ctx context.Context, f adapters.OutFile) error
	// Read returns the thread's last (at most) limit messages, oldest
	// first; nil: this platform cannot read threads.
	Read func(ctx context.Context, limit int) ([]adapters.Said, error)
	// Hidden reports whether the session cannot read a host path
	// (absolute, symlinks resolved); send_file posts nothing the session
	// could not read itself. Nil: the session sees all of Dir.
	Hidden func(path string) bool
	// Propose puts a fact Claude proposes before the thread's people
	// (remember); it stores nothing. Nil: no tool remember.
	Propose func(ctx context.Context, fact string) error
}

// Server answers one session's MCP messages. Handle may be called from
// several goroutines at once: a slow tools/call (an upload) does not hold
// up a ping or a notification, and notifications/cancelled ends the
// context of the call it names.
type Server struct {
	env Env

	mu       sync.Mutex
	inFlight map[string]context.CancelFunc // by the request's id, as JSON
}

// New makes the server for one session.
func New(env Env) *Server {
	return &Server{env: env, inFlight: make(map[string]context.CancelFunc)}
}

// ErrMalformed is returned by Handle for a message it cannot answer in
// JSON-RPC terms (not a JSON object, or a request without an id it could
// echo): the caller answers the control request with an error instead.
var ErrMalformed = errors.New("malformed JSON-RPC message")

// JSON-RPC error codes.
const (
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// protocolVersions are the MCP revisions this server speaks, newest first.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Handle answers one JSON-RPC message (initialize,
// notifications/initialized, tools/list, tools/call, ping; an unknown
// method gets the JSON-RPC error -32601). It returns nil for a
// notification. A tool's failure is a tools/call result with isError set,
// for the model to read; a JSON-RPC error is kept for what the protocol
// itself refuses. The error is ErrMalformed, for a message there is no
// JSON-RPC answer to.
func (s *Server) Handle(ctx context.Context, msg json.RawMessage) (json.RawMessage, error) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || msg[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	var m rpcMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	id := bytes.TrimSpace(m.ID)
	hasID := len(id) > 0 && !bytes.Equal(id, []byte("null"))
	if hasID && id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-' {
		return nil, fmt.Errorf("%w: id %s is neither a string nor a number", ErrMalformed, id)
	}
	switch {
	case m.Method == nil && hasID:
		return errorReply(id, codeInvalidRequest, "not a request: no method")
	case m.Method == nil:
		return nil, fmt.Errorf("%w: no method and no id", ErrMalformed)
	case !hasID:
		s.notify(*m.Method, m.Params)
		return nil, nil
	case m.JSONRPC != "2.0":
		return errorReply(id, codeInvalidRequest, `not JSON-RPC 2.0: "jsonrpc" must be "2.0"`)
	}
	result, rerr := s.call(ctx, id, *m.Method, m.Params)
	if rerr != nil {
		return errorReply(id, rerr.Code, rerr.Message)
	}
	return reply(id, map[string]any{"result": result})
}

// call runs one request; the result is marshalled as the reply's result.
func (s *Server) call(ctx context.Context, id json.RawMessage, method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "initialize":
		return s.initialize(params), nil
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		return map[string]any{"tools": s.tools()}, nil
	case "tools/call":
		ctx, done := s.track(ctx, id)
		defer done()
		return s.callTool(ctx, params)
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: fmt.Sprintf("method %q not found", truncate(method, 100))}
}

// notify takes a notification: notifications/cancelled ends the call it
// names; the others (initialized, progress, roots) need nothing.
func (s *Server) notify(method string, params json.RawMessage) {
	if method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s.mu.Lock()
	cancel := s.inFlight[idKey(p.RequestID)]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// track gives a tools/call a context that notifications/cancelled can end.
func (s *Server) track(ctx context.Context, id json.RawMessage) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	key := idKey(id)
	s.mu.Lock()
	s.inFlight[key] = cancel
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		delete(s.inFlight, key)
		s.mu.Unlock()
		cancel()
	}
}

// idKey is an id in one spelling: 7 and 7.0 differ, but the CLI uses its
// own ids consistently.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

func (s *Server) initialize(params json.RawMessage) any {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p) // an unreadable version gets our newest
	version := protocolVersions[0]
	if slices.Contains(protocolVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
		"serverInfo":      map[string]any{"name": ServerName, "version": "1"},
	}
}

func reply(id json.RawMessage, fields map[string]any) (json.RawMessage, error) {
	fields["jsonrpc"] = "2.0"
	fields["id"] = id
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode MCP reply: %w", err)
	}
	return b, nil
}

func errorReply(id json.RawMessage, code int, msg string) (json.RawMessage, error) {
	return reply(id, map[string]any{"error": rpcError{Code: code, Message: msg}})
}
