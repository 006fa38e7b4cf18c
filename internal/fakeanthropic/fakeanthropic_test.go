package fakeanthropic

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
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
