// Command testmcp is a tiny stdio MCP server for tests: newline-delimited
// JSON-RPC on stdin and stdout. It offers one tool, "touch", and leaves
// marks in the directory -marks names, the tests' oracle outside the bot:
// "started" when it starts (with the value of $TESTMCP_TOKEN, so a test
// sees the secret reached the server), and a line in "called" for each
// tools/call it ran.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func main() {
	marks := flag.String("marks", "", "directory for the marks")
	flag.Parse()
	if err := os.WriteFile(filepath.Join(*marks, "started"), []byte(os.Getenv("TESTMCP_TOKEN")), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "testmcp:", err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification: nothing to answer
		}
		result, err := handle(*marks, req)
		msg := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if err != nil {
			msg["error"] = map[string]any{"code": -32601, "message": err.Error()}
		} else {
			msg["result"] = result
		}
		if out.Encode(msg) != nil {
			return
		}
	}
}

func handle(marks string, req request) (any, error) {
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
