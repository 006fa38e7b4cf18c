package claudeproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestMCPArgs(t *testing.T) {
	const decl = `--mcp-config {"mcpServers":{"claudeops":{"type":"sdk","name":"claudeops"}}}`
	tests := []struct {
		opts      Options
		want, not []string
	}{
		{Options{}, nil, []string{"--mcp-config"}},
		{Options{SDKMCPServers: []string{"claudeops"}}, []string{decl}, []string{"--strict-mcp-config"}},
		{Options{SDKMCPServers: []string{"claudeops"}, Guard: &Guard{}}, []string{decl, "--strict-mcp-config"}, nil},
		{Options{SDKMCPServers: []string{"a", "b"}}, []string{`--mcp-config {"mcpServers":{"a":{"type":"sdk","name":"a"},"b":{"type":"sdk","name":"b"}}}`}, nil},
	}
	for _, tt := range tests {
		got := strings.Join(tt.opts.Args(), " ")
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: args %s\nlack %s", tt.opts, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("%+v: args %s\nhave %s", tt.opts, got, n)
			}
		}
	}
}

// TestMCPFixtureDecodes: what 2.1.330 printed becomes MCPMessage events
// carrying the JSON-RPC message as it was sent. The fixture holds the
// control_request and tool_progress lines of a real run: a guarded session
// declaring claudeops, a tool of it found by ToolSearch, called, allowed,
// answered only after 35 s, and interrupted before that.
func TestMCPFixtureDecodes(t *testing.T) {
	raw, err := os.ReadFile("testdata/mcp-sdk-2.1.330.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	rd := NewReader(bytes.NewReader(raw), 0, nil)
	var methods []string
	for i := range lines {
		ev, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			RequestID string `json:"request_id"`
			Request   struct {
				Message json.RawMessage `json:"message"`
			} `json:"request"`
		}
		_ = json.Unmarshal(lines[i], &w)
		switch e := ev.(type) {
		case *MCPMessage:
			if e.RequestID != w.RequestID || e.Server != "claudeops" || !bytes.Equal(e.Message, w.Request.Message) {
				t.Errorf("line %d: %+v", i+1, e)
			}
			var m struct{ Method string }
			_ = json.Unmarshal(e.Message, &m)
			methods = append(methods, m.Method)
		case *ControlRequest:
			if e.CanUseTool == nil || e.CanUseTool.ToolName != "mcp__claudeops__echo" {
				t.Errorf("line %d: %s", i+1, describe(e))
			}
			methods = append(methods, "can_use_tool")
		case *ToolProgress:
			methods = append(methods, "tool_progress")
		default:
			t.Errorf("line %d: %s", i+1, describe(ev))
		}
	}
	want := "initialize notifications/initialized tools/list can_use_tool tools/call tool_progress notifications/cancelled"
	if got := strings.Join(methods, " "); got != want {
		t.Errorf("decoded %s\nwant    %s", got, want)
	}
}

// pipeRunner runs no process: the test plays the CLI on the pipes.
type pipeRunner struct{ started chan *pipeCLI }

func (r pipeRunner) Start(ctx context.Context, s Spec) (Handle, error) {
	c := &pipeCLI{out: s.Stdout, errw: s.Stderr, lines: make(chan []byte, 64), exit: make(chan struct{})}
	go func() {
		defer c.end()
		defer close(c.lines)
		br := bufio.NewReader(s.Stdin)
		defer s.Stdin.Close()
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	r.started <- c
	return c, nil
}

type pipeCLI struct {
	out, errw *os.File
	lines     chan []byte // what the host wrote, line by line
	exit      chan struct{}
	once      sync.Once
}

func (c *pipeCLI) Name() string { return "pipe" }

func (c *pipeCLI) Wait() (ExitStatus, error) { <-c.exit; return ExitStatus{}, nil }

func (c *pipeCLI) Signal(syscall.Signal) error { c.end(); return nil }

func (c *pipeCLI) end() {
	c.once.Do(func() {
		c.out.Close()
		c.errw.Close()
		close(c.exit)
	})
}

func (c *pipeCLI) print(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.out, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// answer is the next control_response the host wrote.
func (c *pipeCLI) answer(t *testing.T) (id, subtype, errText string, response json.RawMessage) {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatal("stdin closed")
		}
		var w struct {
			Type     string
			Response struct {
				Subtype   string          `json:"subtype"`
				RequestID string          `json:"request_id"`
				Error     string          `json:"error"`
				Response  json.RawMessage `json:"response"`
			}
		}
		if err := json.Unmarshal(line, &w); err != nil || w.Type != "control_response" {
			t.Fatalf("host wrote %s", line)
		}
		return w.Response.RequestID, w.Response.Subtype, w.Response.Error, w.Response.Response
	case <-time.After(30 * time.Second):
		t.Fatal("no answer from the host")
	}
	return
}

func startPiped(t *testing.T) (*Process, *pipeCLI) {
	t.Helper()
	r := pipeRunner{started: make(chan *pipeCLI, 1)}
	p, err := Start(context.Background(), Options{Runner: r, SDKMCPServers: []string{"claudeops"}, StopGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := <-r.started
	t.Cleanup(func() {
		p.Close(context.Background())
		for range p.Events() {
		}
	})
	return p, c
}

func mcpLine(id, body string) string {
	return `{"type":"control_request","request_id":"` + id + `","request":{"subtype":"mcp_message",` + body + `}}`
}

func TestMCPMessageAnswered(t *testing.T) {
	p, c := startPiped(t)
	c.print(t, mcpLine("r1", `"server_name":"claudeops","message":{"method":"tools/list","jsonrpc":"2.0","id":1}`))
	m, ok := nextEvent(t, p).(*MCPMessage)
	if !ok || m.RequestID != "r1" || m.Server != "claudeops" || string(m.Message) != `{"method":"tools/list","jsonrpc":"2.0","id":1}` {
		t.Fatalf("event %+v", m)
	}
	resp := json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	if err := p.RespondMCP(m.RequestID, resp); err != nil {
		t.Fatal(err)
	}
	id, sub, _, body := c.answer(t)
	if id != "r1" || sub != "success" || string(body) != `{"mcp_response":`+string(resp)+`}` {
		t.Errorf("answered %s %s %s", id, sub, body)
	}
	// A notification is answered too: the CLI waits for every answer.
	c.print(t, mcpLine("r2", `"server_name":"claudeops","message":{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	m = nextEvent(t, p).(*MCPMessage)
	if err := p.RespondMCP(m.RequestID, nil); err != nil {
		t.Fatal(err)
	}
	if id, sub, _, body := c.answer(t); id != "r2" || sub != "success" || string(body) != `{"mcp_response":{"jsonrpc":"2.0","result":{}}}` {
		t.Errorf("notification answered %s %s %s", id, sub, body)
	}
	for _, bad := range []struct {
		id   string
		resp json.RawMessage
	}{{"r3", json.RawMessage(`{"jsonrpc":`)}, {"", resp}} {
		if err := p.RespondMCP(bad.id, bad.resp); err == nil {
			t.Errorf("RespondMCP(%q, %s) accepted", bad.id, bad.resp)
		}
	}
}

// TestMCPMalformedRefused: an mcp_message the host cannot take is answered
// with an error by the process itself, never reaches the consumer, and
// does not stop the reader: the next message still arrives.
func TestMCPMalformedRefused(t *testing.T) {
	p, c := startPiped(t)
	bodies := map[string]string{
		"no server":           `"message":{"jsonrpc":"2.0","method":"ping","id":1}`,
		"empty server":        `"server_name":"","message":{"jsonrpc":"2.0","method":"ping","id":1}`,
		"server not a string": `"server_name":7,"message":{"jsonrpc":"2.0","method":"ping","id":1}`,
		"no message":          `"server_name":"claudeops"`,
		"message null":        `"server_name":"claudeops","message":null`,
		"message a string":    `"server_name":"claudeops","message":"{\"method\":\"ping\"}"`,
		"message a batch":     `"server_name":"claudeops","message":[{"jsonrpc":"2.0","method":"ping","id":1}]`,
		"a server not ours":   `"server_name":"github","message":{"jsonrpc":"2.0","method":"ping","id":1}`,
	}
	i := 0
	for name, body := range bodies {
		i++
		id := "bad" + string(rune('a'+i))
		c.print(t, mcpLine(id, body))
		gotID, sub, errText, _ := c.answer(t)
		if gotID != id || sub != "error" || errText == "" {
			t.Errorf("%s: answered %s %s %q, want an error", name, gotID, sub, errText)
		}
		c.print(t, mcpLine("ok"+id, `"server_name":"claudeops","message":{"jsonrpc":"2.0","method":"ping","id":2}`))
		if ev := nextEvent(t, p); !isMCP(ev, "ok"+id) {
			t.Fatalf("%s: the next event is %s, want the next message", name, describe(ev))
		}
	}
}

func TestRespondMCPAfterExit(t *testing.T) {
	p, c := startPiped(t)
	c.end()
	for ev := range p.Events() {
		_ = ev
	}
	if err := p.RespondMCP("r1", nil); !errors.Is(err, ErrExited) {
		t.Errorf("RespondMCP after exit: %v", err)
	}
}

func isMCP(ev Event, id string) bool {
	m, ok := ev.(*MCPMessage)
	return ok && m.RequestID == id
}
