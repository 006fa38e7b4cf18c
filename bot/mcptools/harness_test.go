package mcptools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

// poster records what send_file handed the platform.
type poster struct {
	mu    sync.Mutex
	files []adapters.OutFile
}

func (p *poster) post(ctx context.Context, f adapters.OutFile) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files = append(p.files, f)
	return nil
}

func (p *poster) got() []adapters.OutFile {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]adapters.OutFile(nil), p.files...)
}

// rpc sends one JSON-RPC message and decodes the reply (nil for none).
func rpc(t *testing.T, s *Server, msg string) map[string]any {
	t.Helper()
	out, err := s.Handle(context.Background(), json.RawMessage(msg))
	if err != nil {
		t.Fatalf("Handle(%s): %v", msg, err)
	}
	if out == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("reply %s: %v", out, err)
	}
	return m
}

// callTool calls a tool and returns the result's text and isError; a
// JSON-RPC error fails the test.
func callTool(t *testing.T, s *Server, name string, args any) (string, bool) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	m := rpc(t, s, string(b))
	if m["error"] != nil {
		t.Fatalf("tools/call %s: JSON-RPC error %v", name, m["error"])
	}
	return resultText(t, m)
}

func resultText(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("result %v: want one content block", m)
	}
	block, _ := content[0].(map[string]any)
	if block["type"] != "text" {
		t.Fatalf("result %v: want a text block", m)
	}
	isErr, _ := res["isError"].(bool)
	return block["text"].(string), isErr
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
