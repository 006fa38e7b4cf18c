package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

func fullServer(t *testing.T) *Server {
	t.Helper()
	return New(Env{Dir: t.TempDir(), MaxFile: 1000, Post: (&poster{}).post,
		Read: func(ctx context.Context, limit int) ([]adapters.Said, error) { return nil, nil }})
}

// The messages Claude Code 2.1.330 sends (claudeproc/testdata/mcp-sdk-2.1.330.ndjson).
const (
	cliInitialize  = `{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","title":"Claude Code","description":"Anthropic's agentic coding tool","websiteUrl":"https://claude.com/claude-code","version":"2.1.330"}},"jsonrpc":"2.0","id":0}`
	cliInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	cliToolsList   = `{"method":"tools/list","jsonrpc":"2.0","id":1}`
	cliCancelled   = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"AbortError: remote-cancel"}}`
)

func TestHandshake(t *testing.T) {
	s := fullServer(t)
	init := rpc(t, s, cliInitialize)
	want := map[string]any{
		"jsonrpc": "2.0", "id": 0.0,
		"result": map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": "claudeops", "version": "1"},
		},
	}
	if !reflect.DeepEqual(init, want) {
		t.Errorf("initialize = %v\nwant %v", init, want)
	}
	if m := rpc(t, s, cliInitialized); m != nil {
		t.Errorf("notifications/initialized answered %v, want nothing", m)
	}
	// Versions: the client's when this server speaks it, else the newest.
	for in, want := range map[string]string{"2025-06-18": "2025-06-18", "2024-11-05": "2024-11-05", "2099-01-01": "2025-11-25", "": "2025-11-25"} {
		m := rpc(t, s, `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"`+in+`"}}`)
		if got := m["result"].(map[string]any)["protocolVersion"]; got != want || m["id"] != "a" {
			t.Errorf("client %q: version %v id %v, want %s", in, got, m["id"], want)
		}
	}
	if m := rpc(t, s, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); !reflect.DeepEqual(m, map[string]any{"jsonrpc": "2.0", "id": 9.0, "result": map[string]any{}}) {
		t.Errorf("ping = %v", m)
	}
}

func TestToolsList(t *testing.T) {
	type listed struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	list := func(s *Server) []listed {
		out, err := s.Handle(context.Background(), json.RawMessage(cliToolsList))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Result struct{ Tools []listed }
		}
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		return m.Result.Tools
	}
	tools := list(fullServer(t))
	if len(tools) != 2 || tools[0].Name != "send_file" || tools[1].Name != "read_thread" {
		t.Fatalf("tools = %+v", tools)
	}
	for _, tl := range tools {
		if tl.Description == "" || tl.InputSchema["type"] != "object" || tl.InputSchema["additionalProperties"] != false {
			t.Errorf("%s: %+v", tl.Name, tl)
		}
	}
	if req := tools[0].InputSchema["required"]; !reflect.DeepEqual(req, []any{"path"}) {
		t.Errorf("send_file requires %v", req)
	}
	if !strings.Contains(tools[0].Description, "1000 bytes") {
		t.Errorf("send_file does not state the limit: %q", tools[0].Description)
	}
	limit := tools[1].InputSchema["properties"].(map[string]any)["limit"].(map[string]any)
	if limit["type"] != "integer" || limit["maximum"] != 200.0 || limit["minimum"] != 1.0 {
		t.Errorf("read_thread limit = %v", limit)
	}
	// A platform offers only what it can do.
	for name, tt := range map[string]struct {
		env  Env
		want []string
	}{
		"files only":   {Env{Dir: "/w", MaxFile: 5, Post: (&poster{}).post}, []string{"send_file"}},
		"threads only": {Env{Read: func(context.Context, int) ([]adapters.Said, error) { return nil, nil }}, []string{"read_thread"}},
		"no limit":     {Env{Dir: "/w", Post: (&poster{}).post}, nil},
		"nothing":      {Env{}, nil},
	} {
		var got []string
		for _, tl := range list(New(tt.env)) {
			got = append(got, tl.Name)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: tools %v, want %v", name, got, tt.want)
		}
	}
}

func TestProtocolErrors(t *testing.T) {
	s := fullServer(t)
	tests := []struct {
		name, msg string
		code      float64 // 0: the error must be ErrMalformed
	}{
		{"not JSON", `{"jsonrpc":"2.0",`, 0},
		{"not an object", `"ping"`, 0},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 0},
		{"empty", ``, 0},
		{"id of the wrong type", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, 0},
		{"id true", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, 0},
		{"neither method nor id", `{"jsonrpc":"2.0","result":{}}`, 0},
		{"method of the wrong type", `{"jsonrpc":"2.0","id":1,"method":7}`, 0},
		{"a response", `{"jsonrpc":"2.0","id":1,"result":{}}`, -32600},
		{"not 2.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, -32601},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, -32601},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}`, -32602},
		{"tool by its CLI name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__claudeops__send_file","arguments":{"path":"x"}}}`, -32602},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`, -32602},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := s.Handle(context.Background(), json.RawMessage(tt.msg))
			if tt.code == 0 {
				if !errors.Is(err, ErrMalformed) || out != nil {
					t.Errorf("= %s, %v; want ErrMalformed", out, err)
				}
				return
			}
			var m struct {
				ID    json.RawMessage
				Error struct {
					Code    float64
					Message string
				}
			}
			if err != nil || json.Unmarshal(out, &m) != nil || m.Error.Code != tt.code || m.Error.Message == "" || string(m.ID) != "1" {
				t.Errorf("= %s, %v; want error %v for id 1", out, err, tt.code)
			}
		})
	}
	// Unknown notifications need nothing and get nothing.
	for _, n := range []string{`{"jsonrpc":"2.0","method":"notifications/whatever"}`, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"send_file"}}`, cliCancelled} {
		if out, err := s.Handle(context.Background(), json.RawMessage(n)); out != nil || err != nil {
			t.Errorf("%s answered %s, %v", n, out, err)
		}
	}
}

func TestUnknownMethodNameIsCut(t *testing.T) {
	s := fullServer(t)
	long := strings.Repeat("m", 10000)
	m := rpc(t, s, `{"jsonrpc":"2.0","id":1,"method":"`+long+`"}`)
	if msg := m["error"].(map[string]any)["message"].(string); len(msg) > 200 {
		t.Errorf("error message of %d bytes repeats the method whole", len(msg))
	}
}

// TestCancelledCallEndsItsContext: notifications/cancelled, which the CLI
// sends when a turn is interrupted during a call, ends that call's
// context, so that an upload in progress stops; other calls go on.
func TestCancelledCallEndsItsContext(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "r.txt"), []byte("r"), 0o644); err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 2)
	s := New(Env{Dir: ws, MaxFile: 100, Post: func(ctx context.Context, f adapters.OutFile) error {
		started <- f.Comment
		<-ctx.Done()
		return ctx.Err()
	}})
	call := func(id, comment string) <-chan json.RawMessage {
		ch := make(chan json.RawMessage, 1)
		go func() {
			out, err := s.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"send_file","arguments":{"path":"r.txt","comment":"`+comment+`"}}}`))
			if err != nil {
				t.Error(err)
			}
			ch <- out
		}()
		return ch
	}
	first, second := call("2", "first"), call(`"two"`, "second")
	<-started
	<-started
	if out, err := s.Handle(context.Background(), json.RawMessage(cliCancelled)); out != nil || err != nil {
		t.Fatalf("cancel answered %s, %v", out, err)
	}
	select {
	case out := <-first:
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		if text, isErr := resultText(t, m); !isErr || !strings.Contains(text, "could not post") {
			t.Errorf("cancelled call = %q (isError %v)", text, isErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	select {
	case out := <-second:
		t.Fatalf("a call that was not cancelled ended: %s", out)
	default:
	}
	if out, _ := s.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"two"}}`)); out != nil {
		t.Fatal(out)
	}
	select {
	case <-second:
	case <-time.After(30 * time.Second):
		t.Fatal("the second call did not end when cancelled by its string id")
	}
}
