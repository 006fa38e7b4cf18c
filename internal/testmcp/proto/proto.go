// Package proto is the tests' MCP server's protocol, one JSON-RPC request
// at a time, shared by its stdio program (cmd/testmcp) and its http
// handler (testmcp.HTTP). Its marks go in a directory: "called" gets a
// line per tools/call it ran.
package proto

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Request is a JSON-RPC message; ID is absent in a notification.
type Request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Answer is the JSON-RPC response to req, with the server's one tool,
// "touch", which appends its argument to marks/called.
func Answer(marks string, req Request) map[string]any {
	result, err := handle(marks, req)
	msg := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if err != nil {
		msg["error"] = map[string]any{"code": -32601, "message": err.Error()}
	} else {
		msg["result"] = result
	}
	return msg
}

func handle(marks string, req Request) (any, error) {
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "testmcp", "version": "1"},
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": []any{map[string]any{
			"name":        "touch",
			"description": "Leaves a mark named by the argument.",
			"inputSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{"name": map[string]any{"type": "string"}},
				"required":   []string{"name"},
			},
		}}}, nil
	case "tools/call":
		var p struct {
			Arguments struct {
				Name string `json:"name"`
			} `json:"arguments"`
		}
		_ = json.Unmarshal(req.Params, &p)
		f, err := os.OpenFile(filepath.Join(marks, "called"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, p.Arguments.Name); err != nil {
			return nil, err
		}
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "touched " + p.Arguments.Name}}}, nil
	}
	return nil, fmt.Errorf("no method %s", req.Method)
}
