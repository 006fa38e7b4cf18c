package claudeproc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
)

// Real-CLI tests of the SDK-hosted MCP server: the bot's tools, served by
// bot/mcptools over the control protocol. The CLI lists MCP tools as
// deferred (named in a system message, their schemas loaded by
// ToolSearch), asks can_use_tool for each call, then sends tools/call as
// an mcp_message.

// startMCP is cli.start for a process hosting the SDK MCP server
// "claudeops": each MCPMessage goes to handle on a goroutine of its own,
// as the bot answers them (an upload may be slow), before it is recorded.
func startMCP(c *cli, mod func(*Options), handle func(*Process, *MCPMessage)) (*Process, *recorder) {
	c.t.Helper()
	opts := Options{Bin: c.bin, Dir: c.dir, Env: c.env(), StopGrace: 3 * time.Second, RequestTimeout: 30 * time.Second,
		Guard: &Guard{}, SDKMCPServers: []string{mcptools.ServerName}}
	if mod != nil {
		mod(&opts)
	}
	if opts.Runner == nil && testcli.Runner(c.t) == "sandbox" {
		opts.Runner = Sandbox{HomeBase: filepath.Join(c.home, "sandbox-homes")}
	}
	p, err := Start(context.Background(), opts)
	if err != nil {
		c.t.Fatalf("start: %v", err)
	}
	r := &recorder{t: c.t, notify: make(chan struct{}, 1), done: make(chan struct{})}
	var handlers sync.WaitGroup
	go func() {
		defer close(r.done)
		for ev := range p.Events() {
			if m, ok := ev.(*MCPMessage); ok {
				handlers.Go(func() { handle(p, m) })
			}
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
			select {
			case r.notify <- struct{}{}:
			default:
			}
		}
	}()
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		p.Close(ctx)
		<-r.done
		handlers.Wait()
	})
	return p, r
}

// serve answers MCP messages with srv, as the bot's worker does.
func serve(t *testing.T, srv *mcptools.Server) func(*Process, *MCPMessage) {
	return func(p *Process, m *MCPMessage) {
		out, err := srv.Handle(context.Background(), m.Message)
		if err != nil {
			t.Errorf("mcptools refused %s: %v", m.Message, err)
			err = p.RespondError(m.RequestID, err.Error())
		} else {
			err = p.RespondMCP(m.RequestID, out)
		}
		if err != nil && !errors.Is(err, ErrExited) {
			t.Errorf("answer %s: %v", m.Message, err)
		}
	}
}

// toolResultsIn counts the tool results the model has been sent so far:
// which step of a scripted conversation a request is.
func toolResultsIn(req *fakeanthropic.Request) int {
	n := 0
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				n++
			}
		}
	}
	return n
}

// schemasOffered are the input schemas of the request's tools, by name.
func schemasOffered(t *testing.T, req *fakeanthropic.Request) map[string]any {
	t.Helper()
	var body struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema any    `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, tl := range body.Tools {
		out[tl.Name] = tl.InputSchema
	}
	return out
}

// ourSchemas are the input schemas tools/list gives, by the CLI's names.
func ourSchemas(t *testing.T, srv *mcptools.Server) map[string]any {
	t.Helper()
	out, err := srv.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Result struct {
			Tools []struct {
				Name        string
				InputSchema any
			}
		}
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]any{}
	for _, tl := range m.Result.Tools {
		schemas["mcp__"+mcptools.ServerName+"__"+tl.Name] = tl.InputSchema
	}
	return schemas
}

// allowUntilResult allows each can_use_tool of the turn and returns the
// calls asked about, in order, and the result.
func allowUntilResult(t *testing.T, p *Process, r *recorder) ([]*CanUseTool, *Result) {
	t.Helper()
	var asked []*CanUseTool
	for from := 0; ; {
		ev, i := r.waitFor(from, "can_use_tool or result", func(ev Event) bool { return isCanUseTool(ev) || isResult(ev) })
		from = i + 1
		if res, ok := ev.(*Result); ok {
			return asked, res
		}
		cr := ev.(*ControlRequest)
		asked = append(asked, cr.CanUseTool)
		if err := p.Allow(cr.RequestID, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRealCLIMCPTools(t *testing.T) {
	const report = "quarterly numbers: up\n"
	steps := []fakeanthropic.Block{
		fakeanthropic.ToolUse("ToolSearch", map[string]any{"query": "select:" + mcptools.SendFileTool + "," + mcptools.ReadThreadTool, "max_results": 5}),
		fakeanthropic.ToolUse(mcptools.SendFileTool, map[string]any{"path": "report.txt", "comment": "Q3 for <!channel>\u202e"}),
		fakeanthropic.ToolUse(mcptools.SendFileTool, map[string]any{"path": "../outside.txt"}),
		fakeanthropic.ToolUse(mcptools.ReadThreadTool, map[string]any{"limit": 2}),
	}
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if n := toolResultsIn(req); n < len(steps) {
			return reply(steps[n])
		}
		return reply(fakeanthropic.Text("done"))
	})
	if err := os.WriteFile(filepath.Join(c.dir, "report.txt"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "..", "outside.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var posted []adapters.OutFile
	var limits []int
	srv := mcptools.New(mcptools.Env{
		Dir: c.dir, MaxFile: 1 << 20,
		Post: func(ctx context.Context, f adapters.OutFile) error {
			mu.Lock()
			defer mu.Unlock()
			posted = append(posted, f)
			return nil
		},
		Read: func(ctx context.Context, limit int) ([]adapters.Said, error) {
			mu.Lock()
			limits = append(limits, limit)
			mu.Unlock()
			return []adapters.Said{
				{User: adapters.User{ID: "U1", Name: "ana"}, Text: "numbers please", At: at},
				{User: adapters.User{ID: "B1"}, FromBot: true, Text: "On it.", At: at.Add(time.Minute)},
			}, nil
		},
	})
	p, r := startMCP(c, nil, serve(t, srv))
	if err := p.SendText("post the report"); err != nil {
		t.Fatal(err)
	}
	asked, res := allowUntilResult(t, p, r)
	if res.IsError || res.Result != "done" {
		t.Fatalf("result = %s\n%s", describe(res), r.dump())
	}

	// The CLI names our tools to the model, and after ToolSearch offers
	// them with our schemas.
	reqs := c.api.Requests()
	for _, name := range []string{mcptools.SendFileTool, mcptools.ReadThreadTool} {
		if !strings.Contains(reqs[0].Transcript(), name) {
			t.Errorf("the first request does not name %s", name)
		}
	}
	offered, ours := schemasOffered(t, reqs[1]), ourSchemas(t, srv)
	for name, schema := range ours {
		if !reflect.DeepEqual(offered[name], schema) {
			t.Errorf("%s offered with schema %v, want %v", name, offered[name], schema)
		}
	}
	// Each call went through can_use_tool.
	var names []string
	for _, c := range asked {
		names = append(names, c.ToolName)
	}
	if want := []string{mcptools.SendFileTool, mcptools.SendFileTool, mcptools.ReadThreadTool}; !reflect.DeepEqual(names, want) {
		t.Fatalf("asked about %v, want %v", names, want)
	}
	// What reached the platform, byte for byte, and what the model saw.
	mu.Lock()
	defer mu.Unlock()
	if len(posted) != 1 || posted[0].Name != "report.txt" || string(posted[0].Data) != report || posted[0].Comment != "Q3 for <!channel>" {
		t.Errorf("posted %+v", posted)
	}
	if !reflect.DeepEqual(limits, []int{2}) {
		t.Errorf("thread read with limits %v", limits)
	}
	last := reqs[len(reqs)-1]
	for i, want := range []struct {
		isError bool
		text    string
	}{
		{false, "Posted report.txt (22 bytes) to the thread."},
		{true, `not posted: "../outside.txt" leads outside the working directory`},
		{false, "[2026-11-23T08:00:00Z ana · U1] numbers please\n[2026-11-23T08:01:00Z claudeops (bot)] On it."},
	} {
		tr, ok := last.ToolResult(asked[i].ToolUseID)
		if !ok || tr.IsError != want.isError || tr.Content != want.text {
			t.Errorf("call %d (%s): the model saw %+v, want %+v", i+1, asked[i].ToolName, tr, want)
		}
	}
	// system/init reports the server connected.
	ev, _ := r.waitFor(0, "init", func(ev Event) bool { _, ok := ev.(*SystemInit); return ok })
	var init struct {
		MCPServers []struct{ Name, Status string } `json:"mcp_servers"`
	}
	if err := json.Unmarshal(ev.(*SystemInit).Raw, &init); err != nil || len(init.MCPServers) != 1 || init.MCPServers[0].Name != "claudeops" || init.MCPServers[0].Status != "connected" {
		t.Errorf("init mcp_servers = %+v (%v)", init.MCPServers, err)
	}
}

// TestRealCLIMCPInterruptCancelsCall: an interrupted turn cancels the call
// in progress: the CLI sends notifications/cancelled, and the upload's
// context ends.
func TestRealCLIMCPInterruptCancelsCall(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if toolResultsIn(req) == 0 {
			return reply(fakeanthropic.ToolUse(mcptools.SendFileTool, map[string]any{"path": "big.bin"}))
		}
		return reply(fakeanthropic.Text("stopped"))
	})
	if err := os.WriteFile(filepath.Join(c.dir, "big.bin"), []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	uploading, cancelled := make(chan struct{}), make(chan struct{})
	srv := mcptools.New(mcptools.Env{Dir: c.dir, MaxFile: 1 << 20, Post: func(ctx context.Context, f adapters.OutFile) error {
		close(uploading)
		<-ctx.Done() // a slow upload, until it is called off
		close(cancelled)
		return ctx.Err()
	}})
	p, r := startMCP(c, nil, serve(t, srv))
	if err := p.SendText("send it"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "can_use_tool", isCanUseTool)
	if err := p.Allow(ev.(*ControlRequest).RequestID, nil, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-uploading:
	case <-time.After(eventTimeout):
		t.Fatalf("send_file never reached Post:\n%s", r.dump())
	}
	if _, err := p.Interrupt(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cancelled:
	case <-time.After(eventTimeout):
		t.Fatalf("the upload was not called off:\n%s", r.dump())
	}
	r.waitFor(0, "result", isResult)
	var cancels int
	for _, ev := range r.snapshot() {
		if m, ok := ev.(*MCPMessage); ok && strings.Contains(string(m.Message), `"notifications/cancelled"`) {
			cancels++
		}
	}
	if cancels != 1 {
		t.Errorf("%d notifications/cancelled, want 1", cancels)
	}
}

// TestRealCLIMCPGuardKeepsRepositoryServersOut: declaring our server does
// not let the repository's: a guarded session starts no server of
// .mcp.json (one even named like ours), and ours is the one that answers.
// The control: the same repository without the guard does start them.
func TestRealCLIMCPGuardKeepsRepositoryServersOut(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		name := map[bool]string{true: "guarded", false: "unguarded-control"}[guarded]
		t.Run(name, func(t *testing.T) {
			c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				if toolResultsIn(req) == 0 {
					return reply(fakeanthropic.ToolUse(mcptools.ReadThreadTool, map[string]any{}))
				}
				return reply(fakeanthropic.Text("read"))
			})
			mark, shadow := filepath.Join(c.dir, "mcp-ran"), filepath.Join(c.dir, "shadow-ran")
			mcp := `{"mcpServers":{"x":{"command":"sh","args":["-c","touch ` + mark + `; exit 1"]},` +
				`"claudeops":{"command":"sh","args":["-c","touch ` + shadow + `; exit 1"]}}}`
			files := map[string]string{".mcp.json": mcp, ".claude/settings.json": `{"enableAllProjectMcpServers":true}`}
			if err := os.MkdirAll(filepath.Join(c.dir, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(c.dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			srv := mcptools.New(mcptools.Env{Read: func(ctx context.Context, limit int) ([]adapters.Said, error) {
				return []adapters.Said{{User: adapters.User{ID: "U1", Name: "ana"}, Text: "from our server"}}, nil
			}})
			p, r := startMCP(c, func(o *Options) {
				if !guarded {
					o.Guard = nil
				}
			}, serve(t, srv))
			if err := p.SendText("read the thread"); err != nil {
				t.Fatal(err)
			}
			asked, res := allowUntilResult(t, p, r)
			if _, err := os.Stat(mark); guarded != errors.Is(err, os.ErrNotExist) {
				t.Errorf("guarded %v: the repository's MCP server ran: %v", guarded, err == nil)
			}
			if !guarded {
				return // the control shows the repository's servers start here
			}
			if _, err := os.Stat(shadow); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the repository's server named claudeops ran: %v", err)
			}
			reqs := c.api.Requests()
			if len(asked) != 1 || res.IsError {
				t.Fatalf("asked %d, result %s", len(asked), describe(res))
			}
			if tr, _ := reqs[len(reqs)-1].ToolResult(asked[0].ToolUseID); !strings.Contains(tr.Content, "from our server") {
				t.Errorf("read_thread answered by someone else: %+v", tr)
			}
		})
	}
}
