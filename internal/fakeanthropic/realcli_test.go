package fakeanthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testcli"
)

// ---------------------------------------------------------------------------
// Smoke tests against the real CLI

// claudeBin returns the CLI under test (testcli.Bin: the pinned one, or
// the version scripts/test runs).
func claudeBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	return testcli.Bin(t)
}

type cliProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan map[string]any
	stderr *bytes.Buffer
	done   chan error
}

// startCLI runs the CLI as the bot does: an explicit minimal
// environment, a fresh HOME and a temporary cwd.
func startCLI(t *testing.T, s *Server) *cliProc {
	t.Helper()
	bin := claudeBin(t)
	home, cwd := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, "-p", "--output-format", "stream-json", "--input-format", "stream-json",
		"--verbose", "--permission-prompt-tool", "stdio", "--include-partial-messages")
	cmd.Dir = cwd
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + s.URL,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &cliProc{t: t, cmd: cmd, stdin: stdin, lines: make(chan map[string]any, 1000), stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(p.lines)
		br := bufio.NewReader(stdout) // no line length limit
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				var m map[string]any
				if jerr := json.Unmarshal(line, &m); jerr != nil {
					m = map[string]any{"type": "_unparsable", "line": string(line)}
				}
				p.lines <- m
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		// Wait only after stdout hit EOF: Wait closes the pipe.
		<-readerDone
		p.done <- cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // no-op error if it already exited
		go func() {
			for range p.lines { // unblock the reader if nobody drains
			}
		}()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Errorf("CLI process (pid %d) did not go away", cmd.Process.Pid)
		}
	})
	return p
}

func (p *cliProc) sendUser(text string) {
	p.t.Helper()
	line, _ := json.Marshal(map[string]any{
		"type": "user", "message": map[string]any{"role": "user", "content": text},
		"parent_tool_use_id": nil, "session_id": "",
	})
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		p.t.Fatalf("writing stdin: %v", err)
	}
}

// untilResult returns all stdout lines up to and including the next result.
func (p *cliProc) untilResult(timeout time.Duration) []map[string]any {
	p.t.Helper()
	var got []map[string]any
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout closed before a result; stderr: %s", p.stderr)
			}
			got = append(got, m)
			if m["type"] == "result" {
				return got
			}
		case <-deadline:
			p.t.Fatalf("no result within %v; %d lines so far", timeout, len(got))
		}
	}
}

func (p *cliProc) closeAndWait(timeout time.Duration) error {
	p.t.Helper()
	_ = p.stdin.Close()
	for range p.lines { // drain remaining output
	}
	select {
	case err := <-p.done:
		return err
	case <-time.After(timeout):
		p.t.Fatalf("CLI did not exit within %v after stdin EOF", timeout)
		return nil
	}
}

// streamedText concatenates the text_delta stream events of lines.
func streamedText(lines []map[string]any) string {
	var sb strings.Builder
	for _, m := range lines {
		if m["type"] != "stream_event" {
			continue
		}
		ev, _ := m["event"].(map[string]any)
		if ev["type"] != "content_block_delta" {
			continue
		}
		if d, _ := ev["delta"].(map[string]any); d["type"] == "text_delta" {
			sb.WriteString(d["text"].(string))
		}
	}
	return sb.String()
}

func TestRealCLISmoke(t *testing.T) {
	const prompt = "SMOKE: say hello"
	const answer = "Hello from the fake model — ünïcode and a long enough sentence to arrive in several chunks."
	s := Start(t, func(ctx context.Context, r *Request) Reply {
		if r.IsProbe() {
			return Reply{}
		}
		return Reply{Blocks: []Block{Text(answer)}, ChunkSize: 10}
	})
	p := startCLI(t, s)
	p.sendUser(prompt)
	lines := p.untilResult(60 * time.Second)

	if got := streamedText(lines); got != answer {
		t.Errorf("streamed text %q, want %q", got, answer)
	}
	res := lines[len(lines)-1]
	if res["is_error"] != false || res["result"] != answer {
		t.Errorf("result line %v", res)
	}
	var sawInit, sawAssistant bool
	for _, m := range lines {
		switch m["type"] {
		case "system":
			sawInit = sawInit || m["subtype"] == "init"
		case "assistant":
			sawAssistant = true
			if id, _ := m["request_id"].(string); !strings.HasPrefix(id, "req_fake_") {
				t.Errorf("assistant request_id %q", id)
			}
			if msg, _ := m["message"].(map[string]any); !strings.HasPrefix(fmt.Sprint(msg["id"]), "msg_fake_") {
				t.Errorf("assistant message id %v", msg["id"])
			}
		case "_unparsable":
			t.Errorf("non-JSON stdout line %q", m["line"])
		}
	}
	if !sawInit || !sawAssistant {
		t.Errorf("init %v assistant %v", sawInit, sawAssistant)
	}

	if err := p.closeAndWait(30 * time.Second); err != nil {
		t.Errorf("CLI exit: %v; stderr: %s", err, p.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.LastUserText() != prompt || !r.Stream || r.IsProbe() || !r.HasTool("Bash") {
		t.Errorf("request: text %q stream %v tools %q", r.LastUserText(), r.Stream, r.ToolNames)
	}
	if r.Path != "/v1/messages?beta=true" || !strings.HasPrefix(r.Header.Get("user-agent"), "claude-cli/") ||
		r.Header.Get("anthropic-version") != "2023-06-01" || r.Header.Get("x-api-key") != "sk-test" {
		t.Errorf("request path %q headers %v", r.Path, r.Header)
	}
}

func TestRealCLIToolRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var toolID string
	s := Start(t, func(ctx context.Context, r *Request) Reply {
		if r.IsProbe() {
			return Reply{}
		}
		if trs := r.ToolResults(); len(trs) > 0 {
			return Reply{Blocks: []Block{Text(fmt.Sprintf("tool said <%s> error=%v", trs[0].Content, trs[0].IsError))}}
		}
		if strings.Contains(r.LastUserText(), "history") {
			return Reply{Blocks: []Block{Text(fmt.Sprintf("history has marker: %v", strings.Contains(r.Transcript(), "fake-tool-ok")))}}
		}
		tu := ToolUse("Bash", map[string]string{"command": "echo fake-tool-ok", "description": "Print a marker"})
		mu.Lock()
		toolID = tu.ID
		mu.Unlock()
		return Reply{Blocks: []Block{Thinking("I should run echo."), Text("Running it."), tu}}
	})
	p := startCLI(t, s)
	p.sendUser("run the tool")
	lines := p.untilResult(60 * time.Second)
	if got := lines[len(lines)-1]["result"]; got != "tool said <fake-tool-ok> error=false" {
		t.Errorf("result %q", got)
	}
	p.sendUser("check history")
	lines = p.untilResult(60 * time.Second)
	if got := lines[len(lines)-1]["result"]; got != "history has marker: true" {
		t.Errorf("second result %q", got)
	}
	if err := p.closeAndWait(30 * time.Second); err != nil {
		t.Errorf("CLI exit: %v; stderr: %s", err, p.stderr)
	}

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("got %d requests, want 3", len(reqs))
	}
	mu.Lock()
	defer mu.Unlock()
	trs := reqs[1].ToolResults()
	if len(trs) != 1 || trs[0].ToolUseID != toolID || trs[0].Content != "fake-tool-ok" {
		t.Errorf("tool results %+v (tool id %s)", trs, toolID)
	}
	if reqs[1].LastUserText() != "" {
		t.Errorf("LastUserText of tool-result request %q", reqs[1].LastUserText())
	}
	if got := reqs[2].LastUserText(); got != "check history" {
		t.Errorf("LastUserText %q", got)
	}
	tr := reqs[2].Transcript()
	for _, want := range []string{"user: run the tool", "assistant: Running it.", "assistant: I should run echo.", "assistant: Bash ", "echo fake-tool-ok"} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	// The first request ends with the CLI's environment as a role "system" item.
	if sys := reqs[0].SystemMessages(); len(sys) == 0 {
		t.Errorf("no system items in the first request")
	}
}
