package claudeproc

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testmcp"
)

// Real-CLI tests of the operator's MCP servers (Options.MCPServers): a
// stdio server of the tests' own (internal/testmcp) whose marks are the
// oracle: it started, and which tool calls it ran.

const opsTool = "mcp__ops__" + testmcp.Tool

// opsServer places the test server where the runner can see it (the
// working directory: a sandbox hides the host's /tmp) and returns its
// configuration, with token as its secret, and its marks directory.
func opsServer(t *testing.T, dir, token string) (json.RawMessage, string) {
	t.Helper()
	inside := filepath.Join(dir, ".ops")
	marks := filepath.Join(inside, "marks")
	if err := os.MkdirAll(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{
		"command": testmcp.Build(t, inside), "args": []string{"-marks", marks},
		"env": map[string]string{testmcp.TokenEnv: token},
	})
	return cfg, marks
}

// TestRealCLIOperatorMCPServer: the operator's server starts with its
// secret, its tool is asked about like any tool, and it runs the call
// only once allowed (a denied call never reaches it); the repository's
// .mcp.json still starts nothing. The secret is on no
// command line and in no environment of the session's processes but the
// server's own, and the configuration's pipe is empty once read.
func TestRealCLIOperatorMCPServer(t *testing.T) {
	const token = "s3cret-operator-token"
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		switch toolResultsIn(req) {
		case 0:
			return reply(fakeanthropic.ToolUse(opsTool, map[string]any{"name": "approved"}))
		case 1:
			return reply(fakeanthropic.ToolUse(opsTool, map[string]any{"name": "denied"}))
		}
		return reply(fakeanthropic.Text("done"))
	})
	cfg, marks := opsServer(t, c.dir, token)
	// The repository's own servers stay out beside the operator's: one of
	// .mcp.json (one even named like the operator's) would leave a mark.
	planted := filepath.Join(c.dir, "repo-mcp-ran")
	mcp := `{"mcpServers":{"x":{"command":"sh","args":["-c","touch ` + planted + `; exit 1"]},` +
		`"ops":{"command":"sh","args":["-c","touch ` + planted + `; exit 1"]}}}`
	if err := os.MkdirAll(filepath.Join(c.dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{".mcp.json": mcp, ".claude/settings.json": `{"enableAllProjectMcpServers":true}`} {
		if err := os.WriteFile(filepath.Join(c.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, r := startMCP(c, func(o *Options) { o.MCPServers = map[string]json.RawMessage{"ops": cfg} }, serve(t, mcptools.New(mcptools.Env{})))
	if err := p.SendText("touch it"); err != nil {
		t.Fatal(err)
	}
	ev, i := r.waitFor(0, "can_use_tool", isCanUseTool)
	cr := ev.(*ControlRequest)
	if cr.CanUseTool.ToolName != opsTool {
		t.Fatalf("asked about %s, want %s", cr.CanUseTool.ToolName, opsTool)
	}
	if started, got := testmcp.Started(t, marks); !started || got != token {
		t.Fatalf("server started %v with token %q, want %q", started, got, token)
	}
	if called := testmcp.Called(t, marks); len(called) != 0 {
		t.Fatalf("the server ran %v before the decision", called)
	}
	checkSecretHidden(t, p.Pid(), token, true)
	if err := p.Allow(cr.RequestID, nil, nil); err != nil {
		t.Fatal(err)
	}
	ev, _ = r.waitFor(i+1, "can_use_tool", isCanUseTool)
	if err := p.Deny(ev.(*ControlRequest).RequestID, "no", false); err != nil {
		t.Fatal(err)
	}
	res := r.waitForResult(t)
	if res.IsError || res.Result != "done" {
		t.Fatalf("result = %s\n%s", describe(res), r.dump())
	}
	if _, err := os.Stat(planted); err == nil {
		t.Error("a server of the repository's .mcp.json ran")
	}
	if called := testmcp.Called(t, marks); !reflect.DeepEqual(called, []string{"approved"}) {
		t.Errorf("the server ran %v, want [approved]", called)
	}
	reqs := c.api.Requests()
	if tr, _ := reqs[1].ToolResult(cr.CanUseTool.ToolUseID); tr.IsError || tr.Content != "touched approved" {
		t.Errorf("the model saw %+v", tr)
	}
}

func (r *recorder) waitForResult(t *testing.T) *Result {
	t.Helper()
	ev, _ := r.waitFor(0, "result", isResult)
	return ev.(*Result)
}

// checkSecretHidden: no process under root has secret on its command
// line, none but the stdio MCP server (testmcp; there is one when
// stdio) in its environment, and a pipe at descriptor 3 (the
// configuration's) gives nothing to read any more.
func checkSecretHidden(t *testing.T, root int, secret string, stdio bool) {
	t.Helper()
	par := parents()
	inTree := func(pid int) bool {
		for ; pid > 1; pid = par[pid] {
			if pid == root {
				return true
			}
		}
		return false
	}
	var servers, pipes int
	for pid := range par {
		if !inTree(pid) {
			continue
		}
		dir := "/proc/" + strconv.Itoa(pid)
		cmdline, _ := os.ReadFile(dir + "/cmdline")
		environ, err := os.ReadFile(dir + "/environ")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // ended meanwhile
		}
		if err != nil {
			t.Errorf("read %s/environ: %v", dir, err) // the oracle must see them all
		}
		if strings.Contains(string(cmdline), secret) {
			t.Errorf("pid %d has the secret on its command line: %q", pid, cmdline)
		}
		server := strings.Contains(string(cmdline), "testmcp")
		if server {
			servers++
		}
		if strings.Contains(string(environ), secret) != server {
			t.Errorf("pid %d (%q): the secret in its environment: %v", pid, cmdline, !server)
		}
		if link, _ := os.Readlink(dir + "/fd/3"); strings.HasPrefix(link, "pipe:") {
			pipes++
			if b := readNonblock(t, dir+"/fd/3"); len(b) > 0 {
				t.Errorf("pid %d: descriptor 3 still gives %q", pid, b)
			}
		}
	}
	if wantServers := map[bool]int{true: 1}[stdio]; servers != wantServers || pipes == 0 {
		t.Errorf("found %d MCP servers and %d pipes at descriptor 3 under pid %d, want %d and some", servers, pipes, root, wantServers)
	}
}

func readNonblock(t *testing.T, path string) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Errorf("open %s: %v", path, err)
		return nil
	}
	defer syscall.Close(fd)
	buf := make([]byte, 4096)
	n, _ := syscall.Read(fd, buf)
	return buf[:max(n, 0)]
}

// TestRealCLIOperatorMCPServerAbsent: a session not given the server
// never starts it, and the model's call of its tool fails without
// anyone being asked.
func TestRealCLIOperatorMCPServerAbsent(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if toolResultsIn(req) == 0 {
			return reply(fakeanthropic.ToolUse(opsTool, map[string]any{"name": "unconfigured"}))
		}
		return reply(fakeanthropic.Text("done"))
	})
	_, marks := opsServer(t, c.dir, "unused")
	p, r := startMCP(c, nil, serve(t, mcptools.New(mcptools.Env{})))
	if err := p.SendText("touch it"); err != nil {
		t.Fatal(err)
	}
	asked, res := allowUntilResult(t, p, r)
	if len(asked) != 0 || res.IsError {
		t.Fatalf("asked %d, result %s", len(asked), describe(res))
	}
	if started, _ := testmcp.Started(t, marks); started {
		t.Error("the server started in a session not given it")
	}
	reqs := c.api.Requests()
	var results []fakeanthropic.ToolResult
	for _, rq := range reqs {
		results = append(results, rq.ToolResults()...)
	}
	if len(results) == 0 || !results[0].IsError {
		t.Errorf("the model's call did not fail: %+v", results)
	}
}

// TestRealCLIOperatorMCPServerHTTP: an http server's tool is asked about
// like any tool and runs only once allowed; its secret header reaches the
// server and no process of the session holds it in its command line or
// environment.
func TestRealCLIOperatorMCPServerHTTP(t *testing.T) {
	const bearer = "Bearer s3cret-http-header"
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if toolResultsIn(req) == 0 {
			return reply(fakeanthropic.ToolUse("mcp__web__"+testmcp.Tool, map[string]any{"name": "viahttp"}))
		}
		return reply(fakeanthropic.Text("done"))
	})
	marks := t.TempDir() // the server runs in the test: the host's
	srv := testmcp.HTTP(t, marks)
	cfg, _ := json.Marshal(map[string]any{"type": "http", "url": srv.URL, "headers": map[string]string{"Authorization": bearer}})
	p, r := startMCP(c, func(o *Options) { o.MCPServers = map[string]json.RawMessage{"web": cfg} }, serve(t, mcptools.New(mcptools.Env{})))
	if err := p.SendText("touch it over http"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "can_use_tool", isCanUseTool)
	cr := ev.(*ControlRequest)
	if cr.CanUseTool.ToolName != "mcp__web__"+testmcp.Tool {
		t.Fatalf("asked about %s", cr.CanUseTool.ToolName)
	}
	if called := testmcp.Called(t, marks); len(called) != 0 {
		t.Fatalf("the server ran %v before the decision", called)
	}
	checkSecretHidden(t, p.Pid(), "s3cret-http-header", false)
	if err := p.Allow(cr.RequestID, nil, nil); err != nil {
		t.Fatal(err)
	}
	if res := r.waitForResult(t); res.IsError || res.Result != "done" {
		t.Fatalf("result = %s\n%s", describe(res), r.dump())
	}
	if called := testmcp.Called(t, marks); !reflect.DeepEqual(called, []string{"viahttp"}) {
		t.Errorf("the server ran %v, want [viahttp]", called)
	}
	auths := srv.Auths()
	if len(auths) == 0 || !slices.Contains(auths, bearer) {
		t.Errorf("the server was sent Authorization %q", auths)
	}
}

// TestRealCLIOperatorMCPSecretSeenBySession pins a known gap, said in
// docs/SECURITY.md ("Operator MCP servers"): a command the session runs,
// once allowed, reads a stdio server's environment, its secret included,
// under local and sandbox alike (same user; in the sandbox, the same PID
// namespace). Issue 32's credential-injecting proxy is to close it: when
// this fails, the gap is gone and the document must say so.
func TestRealCLIOperatorMCPSecretSeenBySession(t *testing.T) {
	const token = "s3cret-seen-by-session"
	const probe = `for f in /proc/[0-9]*/environ; do { tr '\0' '\n' < "$f"; } 2>/dev/null; done | grep -c '` + token + `' || true`
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if toolResultsIn(req) == 0 {
			return reply(fakeanthropic.ToolUse("Bash", map[string]any{"command": probe, "description": "look for the secret"}))
		}
		return reply(fakeanthropic.Text("done"))
	})
	cfg, _ := opsServer(t, c.dir, token)
	p, r := startMCP(c, func(o *Options) { o.MCPServers = map[string]json.RawMessage{"ops": cfg} }, serve(t, mcptools.New(mcptools.Env{})))
	if err := p.SendText("look"); err != nil {
		t.Fatal(err)
	}
	asked, res := allowUntilResult(t, p, r)
	if len(asked) != 1 || res.IsError {
		t.Fatalf("asked %d, result %s", len(asked), describe(res))
	}
	reqs := c.api.Requests()
	tr, _ := reqs[len(reqs)-1].ToolResult(asked[0].ToolUseID)
	n, err := strconv.Atoi(strings.TrimSpace(tr.Content))
	if err != nil {
		t.Fatalf("the probe said %q", tr.Content)
	}
	if n == 0 {
		t.Error("the session no longer sees the server's secret: the gap is closed, update docs/SECURITY.md")
	}
}
