package fakeanthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// Request parsing

const sampleBody = `{
  "model": "claude-opus-5-5",
  "stream": true,
  "max_tokens": 128000,
  "system": [{"type":"text","text":"billing"},{"type":"text","text":"You are a Claude agent."}],
  "tools": [{"name":"Bash","input_schema":{}},{"name":"Read","input_schema":{}},{"name":"DeferredToolPlaceholder","defer_loading":true}],
  "messages": [
    {"role":"user","content":"first prompt PINEAPPLE"},
    {"role":"system","content":[{"type":"text","text":"# Environment\nstuff"}]},
    {"role":"assistant","content":[
      {"type":"thinking","thinking":"let me think","signature":"sig"},
      {"type":"text","text":"I will run it."},
      {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo hi"}},
      {"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/x"}}
    ]},
    {"role":"user","content":[
      {"type":"tool_result","tool_use_id":"toolu_1","content":"hi\n\n<system-reminder>\n<total_tokens>5 tokens left</total_tokens>\n</system-reminder>","is_error":false},
      {"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"line one"},{"type":"image","source":{}},{"type":"text","text":"line two"}],"is_error":true},
      {"type":"text","text":"<system-reminder>\nYou are powered by a fake.\n</system-reminder>"},
      {"type":"text","text":"<local-command-caveat>caveat</local-command-caveat>"},
      {"type":"text","text":"<command-name>/model</command-name>\n  <command-message>model</command-message>\n  <command-args>x</command-args>\n"},
      {"type":"text","text":"<local-command-stdout>Set model to x</local-command-stdout>\n"},
      {"type":"text","text":"second prompt","cache_control":{"type":"ephemeral"}}
    ]},
    {"role":"system","content":"The user sent a new message while you were working:\nhurry up\n\nThis is how Claude Code surfaces it."}
  ]
}`

func TestParseRequest(t *testing.T) {
	h := http.Header{"X-Api-Key": {"sk-test"}}
	r, err := ParseRequest([]byte(sampleBody), h)
	if err != nil {
		t.Fatal(err)
	}
	h.Set("X-Api-Key", "changed")
	if got := r.Header.Get("x-api-key"); got != "sk-test" {
		t.Errorf("header not cloned: %q", got)
	}
	if r.Model != "claude-opus-5-5" || !r.Stream || r.MaxTokens != 128000 {
		t.Errorf("model/stream/max_tokens = %q %v %d", r.Model, r.Stream, r.MaxTokens)
	}
	if want := []string{"billing", "You are a Claude agent."}; !reflect.DeepEqual(r.System, want) {
		t.Errorf("System = %q, want %q", r.System, want)
	}
	if want := []string{"Bash", "Read", "DeferredToolPlaceholder"}; !reflect.DeepEqual(r.ToolNames, want) {
		t.Errorf("ToolNames = %q", r.ToolNames)
	}
	if !r.HasTool("Read") || r.HasTool("Write") {
		t.Errorf("HasTool wrong")
	}
	if len(r.Messages) != 5 {
		t.Fatalf("got %d messages", len(r.Messages))
	}
	first := r.Messages[0]
	if first.Role != "user" || len(first.Content) != 1 || first.Content[0].Type != "text" || first.Content[0].Text != "first prompt PINEAPPLE" {
		t.Errorf("string content not normalised: %+v", first)
	}
	asst := r.Messages[2].Content
	if asst[0].Thinking != "let me think" || asst[0].Signature != "sig" {
		t.Errorf("thinking block: %+v", asst[0])
	}
	if asst[2].ID != "toolu_1" || asst[2].Name != "Bash" || string(asst[2].Input) != `{"command":"echo hi"}` {
		t.Errorf("tool_use block: %+v", asst[2])
	}
	if got := r.LastUserText(); got != "second prompt" {
		t.Errorf("LastUserText = %q", got)
	}
	wantTR := []ToolResult{
		{ToolUseID: "toolu_1", Content: "hi", RawContent: "hi\n\n<system-reminder>\n<total_tokens>5 tokens left</total_tokens>\n</system-reminder>"},
		{ToolUseID: "toolu_2", Content: "line one\nline two", RawContent: "line one\nline two", IsError: true},
	}
	if got := r.ToolResults(); !reflect.DeepEqual(got, wantTR) {
		t.Errorf("ToolResults = %+v\nwant %+v", got, wantTR)
	}
	if tr, ok := r.ToolResult("toolu_2"); !ok || !tr.IsError {
		t.Errorf("ToolResult(toolu_2) = %+v %v", tr, ok)
	}
	if _, ok := r.ToolResult("toolu_nope"); ok {
		t.Errorf("ToolResult found an unknown id")
	}
	sys := r.SystemMessages()
	if len(sys) != 2 || sys[0] != "# Environment\nstuff" || !strings.HasPrefix(sys[1], "The user sent a new message while you were working:\nhurry up") {
		t.Errorf("SystemMessages = %q", sys)
	}
	tr := r.Transcript()
	for _, want := range []string{"user: first prompt PINEAPPLE", "assistant: I will run it.", "assistant: let me think",
		`assistant: Bash {"command":"echo hi"}`, "user: line one\nline two", "user: second prompt", "system: The user sent"} {
		if !strings.Contains(tr, want) {
			t.Errorf("Transcript lacks %q:\n%s", want, tr)
		}
	}
	if r.IsProbe() {
		t.Errorf("IsProbe true for a normal request")
	}
}

func TestParseRequestEdgeCases(t *testing.T) {
	probe, err := ParseRequest([]byte(`{"model":"m","max_tokens":1,"system":"plain system","messages":[{"role":"user","content":[{"type":"text","text":"Hi","cache_control":{"type":"ephemeral"}}]}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !probe.IsProbe() || probe.LastUserText() != "Hi" || probe.Header == nil {
		t.Errorf("probe: IsProbe=%v LastUserText=%q", probe.IsProbe(), probe.LastUserText())
	}
	if want := []string{"plain system"}; !reflect.DeepEqual(probe.System, want) {
		t.Errorf("string system = %q", probe.System)
	}

	onlyTools, err := ParseRequest([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]},{"role":"system","content":"s"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := onlyTools.LastUserText(); got != "" {
		t.Errorf("LastUserText of a tool-result-only message = %q", got)
	}
	if got := onlyTools.ToolResults(); len(got) != 1 || got[0].Content != "r" {
		t.Errorf("ToolResults = %+v", got)
	}

	inline, _ := ParseRequest([]byte(`{"messages":[{"role":"user","content":"<system-reminder>x</system-reminder>\n\nhello <system-reminder>y</system-reminder>there"}]}`), nil)
	if got := inline.LastUserText(); got != "hello there" {
		t.Errorf("inline reminders: %q", got)
	}
	if got := StripSystemReminders("a<system-reminder>unterminated"); got != "a" {
		t.Errorf("unterminated reminder: %q", got)
	}

	for _, bad := range []string{`not json`, `{"messages":[{"role":"user","content":42}]}`, `{"tools":[1]}`} {
		if _, err := ParseRequest([]byte(bad), nil); err == nil {
			t.Errorf("ParseRequest(%s) succeeded", bad)
		}
	}
}

func TestChunksUTF8(t *testing.T) {
	s := "héllo wörld ✓ 日本語"
	got := chunks(s, 3)
	if strings.Join(got, "") != s {
		t.Fatalf("chunks lose text: %q", got)
	}
	for _, c := range got {
		if n := len([]rune(c)); n > 3 || n == 0 {
			t.Errorf("chunk %q has %d runes", c, n)
		}
	}
	if chunks("", 3) != nil {
		t.Errorf("empty string gives chunks")
	}
}

func TestToolUseIDs(t *testing.T) {
	a := ToolUse("Bash", map[string]string{"command": "ls"})
	b := ToolUse("Read", json.RawMessage(`{"file_path":"/a"}`))
	c := ToolUse("EnterPlanMode", nil)
	if a.ID == b.ID || !strings.HasPrefix(a.ID, "toolu_fake_") || !strings.HasPrefix(b.ID, "toolu_fake_") {
		t.Errorf("ids %q %q", a.ID, b.ID)
	}
	if string(a.Input) != `{"command":"ls"}` || string(b.Input) != `{"file_path":"/a"}` || string(c.Input) != `{}` {
		t.Errorf("inputs %s %s %s", a.Input, b.Input, c.Input)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("ToolUse with invalid raw JSON did not panic")
		}
	}()
	ToolUse("X", json.RawMessage(`{`))
}

// ---------------------------------------------------------------------------
// HTTP behaviour

func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func userBody(stream bool, text string) string {
	b, _ := json.Marshal(map[string]any{
		"model": "claude-test", "stream": stream, "max_tokens": 1000,
		"tools":    []any{map[string]any{"name": "Bash"}},
		"messages": []any{map[string]any{"role": "user", "content": text}},
	})
	return string(b)
}

type event struct {
	name string
	data map[string]any
	raw  string
}

// readEvent reads one SSE event and checks its framing strictly:
// "event: <name>\ndata: <json>\n\n". It returns io.EOF at a clean end.
func readEvent(br *bufio.Reader) (event, error) {
	var lines [3]string
	for i := range lines {
		l, err := br.ReadString('\n')
		if err == io.EOF && i == 0 && l == "" {
			return event{}, io.EOF
		}
		if err != nil {
			return event{}, fmt.Errorf("reading event line %d (%q): %w", i, l, err)
		}
		lines[i] = l
	}
	l1, l2, l3 := lines[0], lines[1], lines[2]
	if !strings.HasPrefix(l1, "event: ") || !strings.HasPrefix(l2, "data: ") || l3 != "\n" {
		return event{}, fmt.Errorf("bad SSE framing: %q %q %q", l1, l2, l3)
	}
	ev := event{name: strings.TrimSuffix(strings.TrimPrefix(l1, "event: "), "\n"), raw: strings.TrimPrefix(l2, "data: ")}
	if err := json.Unmarshal([]byte(ev.raw), &ev.data); err != nil {
		return event{}, fmt.Errorf("event data is not JSON: %q", l2)
	}
	if ev.data["type"] != ev.name {
		return event{}, fmt.Errorf("event %q has data type %v", ev.name, ev.data["type"])
	}
	return ev, nil
}

func readAllEvents(t *testing.T, br *bufio.Reader) []event {
	t.Helper()
	var evs []event
	for {
		ev, err := readEvent(br)
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		evs = append(evs, ev)
	}
}

func TestStreamingFormat(t *testing.T) {
	var tool Block
	s := Start(t, func(ctx context.Context, r *Request) Reply {
		tool = ToolUse("Bash", map[string]any{"command": "echo ✓ done", "description": "say done"})
		return Reply{Blocks: []Block{Thinking("pondering deeply"), Text("Hello, wörld! This text is long enough to need chunks."), tool}, ChunkSize: 8}
	})
	resp := post(t, s, "/v1/messages?beta=true", userBody(true, "go"))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("content-type") != "text/event-stream" {
		t.Fatalf("status %d content-type %q", resp.StatusCode, resp.Header.Get("content-type"))
	}
	if id := resp.Header.Get("request-id"); !strings.HasPrefix(id, "req_fake_") {
		t.Errorf("request-id %q", id)
	}
	evs := readAllEvents(t, bufio.NewReader(resp.Body))

	var names []string
	texts := map[int]*strings.Builder{}
	var sig string
	for _, ev := range evs {
		names = append(names, ev.name)
		if ev.name != "content_block_delta" {
			continue
		}
		idx := int(ev.data["index"].(float64))
		if texts[idx] == nil {
			texts[idx] = &strings.Builder{}
		}
		d := ev.data["delta"].(map[string]any)
		switch d["type"] {
		case "text_delta":
			texts[idx].WriteString(d["text"].(string))
		case "thinking_delta":
			texts[idx].WriteString(d["thinking"].(string))
		case "input_json_delta":
			texts[idx].WriteString(d["partial_json"].(string))
		case "signature_delta":
			sig = d["signature"].(string)
		default:
			t.Errorf("unknown delta %v", d)
		}
	}
	// Collapse runs of deltas for the sequence check.
	var seq []string
	for _, n := range names {
		if n == "content_block_delta" && len(seq) > 0 && seq[len(seq)-1] == "delta*" {
			continue
		}
		if n == "content_block_delta" {
			n = "delta*"
		}
		seq = append(seq, n)
	}
	want := []string{"message_start",
		"content_block_start", "delta*", "content_block_stop",
		"content_block_start", "delta*", "content_block_stop",
		"content_block_start", "delta*", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(seq, want) {
		t.Fatalf("event sequence %q\nwant %q", seq, want)
	}
	msg := evs[0].data["message"].(map[string]any)
	if id, _ := msg["id"].(string); !strings.HasPrefix(id, "msg_fake_") || msg["model"] != "claude-test" || msg["role"] != "assistant" {
		t.Errorf("message_start %s", evs[0].raw)
	}
	if got := texts[0].String(); got != "pondering deeply" || sig == "" {
		t.Errorf("thinking %q signature %q", got, sig)
	}
	if got := texts[1].String(); got != "Hello, wörld! This text is long enough to need chunks." {
		t.Errorf("text %q", got)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(texts[2].String()), &input); err != nil || input["command"] != "echo ✓ done" {
		t.Errorf("tool input %q (%v)", texts[2].String(), err)
	}
	for _, ev := range evs {
		if ev.name == "content_block_start" && ev.data["index"].(float64) == 2 {
			cb := ev.data["content_block"].(map[string]any)
			if cb["type"] != "tool_use" || cb["id"] != tool.ID || cb["name"] != "Bash" {
				t.Errorf("tool_use start %s", ev.raw)
			}
		}
	}
	md := evs[len(evs)-2].data
	if md["delta"].(map[string]any)["stop_reason"] != "tool_use" || md["usage"].(map[string]any)["output_tokens"] == nil {
		t.Errorf("message_delta %s", evs[len(evs)-2].raw)
	}
	reqs := s.WaitRequests(1, time.Second)
	if reqs[0].LastUserText() != "go" || reqs[0].Path != "/v1/messages?beta=true" || reqs[0].Seq != 1 {
		t.Errorf("recorded request %+v", reqs[0])
	}
}

func TestNonStreamingAndProbe(t *testing.T) {
	s := Start(t, func(ctx context.Context, r *Request) Reply {
		if r.IsProbe() {
			return Reply{}
		}
		return Reply{Blocks: []Block{Text("plain answer"), ToolUse("Read", map[string]string{"file_path": "/a"})}, StopReason: "max_tokens"}
	})
	check := func(body string, wantStop string, wantTypes ...string) map[string]any {
		t.Helper()
		resp := post(t, s, "/v1/messages?beta=true", body)
		defer resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("content-type"), "application/json") {
			t.Fatalf("status %d content-type %q", resp.StatusCode, resp.Header.Get("content-type"))
		}
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		if m["type"] != "message" || m["role"] != "assistant" || m["stop_reason"] != wantStop || m["usage"] == nil {
			t.Errorf("message %v", m)
		}
		if _, ok := m["stop_sequence"]; !ok {
			t.Errorf("no stop_sequence key")
		}
		content := m["content"].([]any)
		var types []string
		for _, c := range content {
			types = append(types, c.(map[string]any)["type"].(string))
		}
		if !reflect.DeepEqual(types, wantTypes) {
			t.Errorf("content types %q want %q", types, wantTypes)
		}
		return m
	}
	m := check(userBody(false, "x"), "max_tokens", "text", "tool_use")
	if tu := m["content"].([]any)[1].(map[string]any); tu["input"].(map[string]any)["file_path"] != "/a" {
		t.Errorf("tool_use %v", tu)
	}
	m = check(`{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`, "end_turn", "text")
	if m["content"].([]any)[0].(map[string]any)["text"] != DefaultText || m["model"] != "claude-sonnet-4-5" {
		t.Errorf("probe answer %v", m)
	}

	nilScript := Start(t, nil)
	resp := post(t, nilScript, "/v1/messages", userBody(true, "hi"))
	evs := readAllEvents(t, bufio.NewReader(resp.Body))
	resp.Body.Close()
	if len(evs) != 6 || evs[2].data["delta"].(map[string]any)["text"] != DefaultText {
		t.Errorf("nil script events: %d", len(evs))
	}
}

func TestErrorReply(t *testing.T) {
	s := Start(t, func(ctx context.Context, r *Request) Reply {
		if r.Stream {
			return Reply{Status: 529, Header: http.Header{"Retry-After": {"0"}}}
		}
		return Reply{Status: 401, ErrorType: "authentication_error", ErrorMessage: "invalid x-api-key"}
	})
	for _, tc := range []struct {
		stream bool
		status int
		typ    string
	}{{true, 529, "overloaded_error"}, {false, 401, "authentication_error"}} {
		resp := post(t, s, "/v1/messages?beta=true", userBody(tc.stream, "x"))
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m struct {
			Type  string
			Error struct{ Type, Message string }
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.status || m.Type != "error" || m.Error.Type != tc.typ || m.Error.Message == "" {
			t.Errorf("got %d %s", resp.StatusCode, body)
		}
		if resp.Header.Get("request-id") == "" {
			t.Errorf("no request-id on error")
		}
		if tc.stream && resp.Header.Get("retry-after") != "0" {
			t.Errorf("retry-after header missing")
		}
	}
}

func TestHold(t *testing.T) {
	hold := make(chan struct{})
	s := Start(t, func(ctx context.Context, r *Request) Reply {
		return Reply{Blocks: []Block{Text("first chunk|second chunk")}, ChunkSize: 12, Hold: hold}
	})
	resp := post(t, s, "/v1/messages?beta=true", userBody(true, "x"))
	defer resp.Body.Close()
	evCh := make(chan event, 100)
	var readErr error
	go func() {
		defer close(evCh)
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := readEvent(br)
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				return
			}
			evCh <- ev
		}
	}()
	next := func(timeout time.Duration) (event, bool) {
		select {
		case ev, ok := <-evCh:
			return ev, ok
		case <-time.After(timeout):
			return event{}, false
		}
	}
	for _, want := range []string{"message_start", "content_block_start", "content_block_delta"} {
		ev, ok := next(5 * time.Second)
		if !ok || ev.name != want {
			t.Fatalf("got %q (%v), want %q", ev.name, ok, want)
		}
	}
	if ev, ok := next(200 * time.Millisecond); ok {
		t.Fatalf("event %q arrived while held", ev.name)
	}
	close(hold)
	var rest []string
	for ev := range evCh {
		rest = append(rest, ev.name)
	}
	if readErr != nil {
		t.Fatal(readErr)
	}
	if want := []string{"content_block_delta", "content_block_stop", "message_delta", "message_stop"}; !reflect.DeepEqual(rest, want) {
		t.Errorf("after hold: %q", rest)
	}
}

func TestHoldEndsWhenClientDisconnects(t *testing.T) {
	ctxDone := make(chan struct{})
	s := Start(t, func(ctx context.Context, r *Request) Reply {
		go func() { <-ctx.Done(); close(ctxDone) }()
		return Reply{Blocks: []Block{Text("never finished")}, Hold: make(chan struct{})}
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/messages?beta=true", strings.NewReader(userBody(true, "x")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if ev, err := readEvent(br); err != nil || ev.name != "message_start" {
		t.Fatalf("first event %q %v", ev.name, err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-ctxDone:
	case <-time.After(5 * time.Second):
		t.Fatal("script context not cancelled after client disconnect")
	}
}

func TestStreamErrorAndDrop(t *testing.T) {
	s := Start(t, func(ctx context.Context, r *Request) Reply {
		if r.LastUserText() == "error" {
			return Reply{Blocks: []Block{Text("partial then error")}, StreamError: "overloaded_error"}
		}
		return Reply{Blocks: []Block{Text("partial then drop")}, Drop: true, ChunkSize: 4}
	})
	resp := post(t, s, "/v1/messages?beta=true", userBody(true, "error"))
	evs := readAllEvents(t, bufio.NewReader(resp.Body))
	resp.Body.Close()
	last := evs[len(evs)-1]
	if len(evs) != 4 || last.name != "error" || last.data["error"].(map[string]any)["type"] != "overloaded_error" {
		t.Errorf("stream error events: %d, last %s", len(evs), last.raw)
	}

	resp = post(t, s, "/v1/messages?beta=true", userBody(true, "drop"))
	_, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Errorf("dropped stream read without error")
	}
}

// fakeTB captures Errorf/Fatalf and cleanups so failure reporting can be tested.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestUnexpectedRequestsReportedAtCleanup(t *testing.T) {
	ftb := &fakeTB{TB: t}
	s := Start(ftb, func(ctx context.Context, r *Request) Reply {
		if r.LastUserText() == "boom" {
			panic("script bug")
		}
		return Reply{Blocks: []Block{Text("ok")}}
	})
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/models: %d", resp.StatusCode)
	}
	resp = post(t, s, "/v1/messages/count_tokens?beta=true", userBody(false, "x"))
	resp.Body.Close()
	resp = post(t, s, "/v1/messages", `{"messages": 7}`)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("bad body: %d", resp.StatusCode)
	}
	resp = post(t, s, "/v1/messages", userBody(false, "boom"))
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("panicking script: %d", resp.StatusCode)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("recorded %d requests, want 1 (only the parsable /v1/messages one)", n)
	}
	ftb.mu.Lock()
	if len(ftb.errs) != 0 {
		t.Errorf("errors reported before cleanup: %q", ftb.errs)
	}
	ftb.mu.Unlock()

	ftb.runCleanups()
	all := strings.Join(ftb.errs, "\n")
	for _, want := range []string{"GET /v1/models", "POST /v1/messages/count_tokens?beta=true", "not a Messages request", "Script panicked"} {
		if !strings.Contains(all, want) {
			t.Errorf("cleanup errors lack %q:\n%s", want, all)
		}
	}
	if _, err := http.Get(s.URL + "/v1/models"); err == nil {
		t.Errorf("server still serving after cleanup")
	}
}

func TestWaitRequests(t *testing.T) {
	s := Start(t, nil)
	if reqs, ok := s.TryWaitRequests(1, 50*time.Millisecond); ok || len(reqs) != 0 {
		t.Fatalf("TryWaitRequests on idle server: %d %v", len(reqs), ok)
	}
	go func() {
		for i := 0; i < 3; i++ {
			resp, err := http.Post(s.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(userBody(false, fmt.Sprint("m", i))))
			if err == nil {
				resp.Body.Close()
			}
		}
	}()
	reqs := s.WaitRequests(3, 5*time.Second)
	for i, r := range reqs {
		if r.LastUserText() != fmt.Sprint("m", i) || r.Seq != i+1 {
			t.Errorf("request %d: %q seq %d", i, r.LastUserText(), r.Seq)
		}
	}
}

// ---------------------------------------------------------------------------
// Smoke tests against the real CLI

// claudeBin returns the pinned CLI: $CLAUDEOPS_TEST_CLAUDE_BIN, else the
// local install used during development, else the test is skipped.
func claudeBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real Claude Code CLI")
	}
	if bin := os.Getenv("CLAUDEOPS_TEST_CLAUDE_BIN"); bin != "" {
		return bin
	}
	const local = "/tmp/clitest/node_modules/.bin/claude"
	if _, err := os.Stat(local); err == nil {
		return local
	}
	t.Skip("CLAUDEOPS_TEST_CLAUDE_BIN not set and no local CLI install")
	return ""
}

type cliProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan map[string]any
	stderr *bytes.Buffer
	done   chan error
}

// startCLI runs the CLI as CLAUDE_CLI.md §1 shows: an explicit minimal
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
