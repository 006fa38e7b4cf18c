package fakeanthropic

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

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
