package claudeproc

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// fakeAnswer is the control_response the fake CLI got, as it printed it.
type fakeAnswer struct {
	Response struct {
		Subtype   string `json:"subtype"`
		RequestID string `json:"request_id"`
		Error     string `json:"error"`
		Response  struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		} `json:"response"`
	} `json:"response"`
}

// answerWithin waits for the fake CLI's report of the answer it read on
// its stdin. Today's turn limit is minutes; an answer must come at once.
func answerWithin(t *testing.T, p *Process, d time.Duration) fakeAnswer {
	t.Helper()
	u := waitEvent(t, p, d, func(u *Unknown) bool { return u.Type == "fake_answer" })
	var w struct {
		Answer fakeAnswer `json:"answer"`
	}
	if err := json.Unmarshal(u.Raw, &w); err != nil {
		t.Fatalf("fake_answer %s: %v", u.Raw, err)
	}
	return w.Answer
}

// TestOversizedControlRequestDenied: a can_use_tool request longer than
// the line cap (a 100 KiB Write at the lowest cap the bot takes) is denied
// at once, saying why, to the request_id read from the line's head; the
// CLI gets the deny on its stdin and the Truncated event says what was
// refused, for the thread.
func TestOversizedControlRequestDenied(t *testing.T) {
	t.Parallel()
	p := startFake(t, fakeAsks, Options{MaxLineBytes: 64 << 10})
	if err := p.SendText("big-ask"); err != nil {
		t.Fatal(err)
	}
	tr := waitEvent(t, p, evTimeout, func(e *Truncated) bool { return e.Type == "control_request" })
	if tr.RequestID != "req-big" || tr.ToolName != "Write" || tr.Refused == "" {
		t.Errorf("truncated request: id %q tool %q refused %q; want req-big, Write and the reason", tr.RequestID, tr.ToolName, tr.Refused)
	}
	a := answerWithin(t, p, 5*time.Second)
	r := a.Response
	if r.Subtype != "success" || r.RequestID != "req-big" || r.Response.Behavior != "deny" {
		t.Fatalf("the CLI got %+v; want a deny of req-big", r)
	}
	if !strings.Contains(r.Response.Message, "too large to show") {
		t.Errorf("deny message %q does not say why", r.Response.Message)
	}
	waitEvent[*Result](t, p, evTimeout, nil)
}

// TestUnknownControlRequestAnswered: a control request of a subtype the
// bot does not know (a newer CLI's) gets an error response, not silence.
func TestUnknownControlRequestAnswered(t *testing.T) {
	t.Parallel()
	p := startFake(t, fakeAsks, Options{})
	for range 2 { // the second is answered too (logged only once)
		if err := p.SendText("future-ask"); err != nil {
			t.Fatal(err)
		}
		a := answerWithin(t, p, 5*time.Second)
		r := a.Response
		if r.Subtype != "error" || r.RequestID != "req-future" || !strings.Contains(r.Error, "fake_future_request") {
			t.Fatalf("the CLI got %+v; want an error response to req-future naming the subtype", r)
		}
		waitEvent[*Result](t, p, evTimeout, nil)
	}
}

// TestMalformedControlRequestAnswered: a control request line that is not
// valid JSON is answered at once — a can_use_tool denied saying why,
// another subtype refused — to the request_id read from its head; the
// thread still hears of the malformed line. A malformed line of another
// type is not answered.
func TestMalformedControlRequestAnswered(t *testing.T) {
	t.Parallel()
	p := startFake(t, fakeAsks, Options{})
	for _, tc := range []struct{ ask, id, want string }{
		{"malformed-ask", "req-bad", "deny"},
		{"malformed-future-ask", "req-bad2", "error"},
	} {
		if err := p.SendText(tc.ask); err != nil {
			t.Fatal(err)
		}
		waitEvent[*ParseError](t, p, evTimeout, nil)
		r := answerWithin(t, p, 5*time.Second).Response
		got := r.Subtype
		if got == "success" {
			got = r.Response.Behavior
		}
		if r.RequestID != tc.id || got != tc.want {
			t.Fatalf("%s: the CLI got %+v; want %s to %s", tc.ask, r, tc.want, tc.id)
		}
		if tc.want == "deny" && !strings.Contains(r.Response.Message, "not valid JSON") {
			t.Errorf("deny message %q does not say why", r.Response.Message)
		}
		waitEvent[*Result](t, p, evTimeout, nil)
	}
}

// TestControlHead: the envelope's request_id and the request's subtype
// and tool_name are read from the head of a cut line, at their own depth
// only: a key of the same name inside the input is not taken.
func TestControlHead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line       string
		id, sub, toolNam string
	}{
		{"cli order", `{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"content":"aaa`, "r1", "can_use_tool", "Write"},
		{"cut in the id", `{"type":"control_request","request_id":"r1`, "", "", ""},
		{"id after the request", `{"type":"control_request","request":{"subtype":"can_use_tool","tool_name":"X","input":{"request_id":"forged","tool_name":"Y","a":"bbb`, "", "can_use_tool", "X"},
		{"spaces", `{ "type" : "control_request" , "request_id" : "r\"2" , "request" : { "subtype" : "mcp_message" , "message" : {`, `r"2`, "mcp_message", ""},
		{"not an object", `["request_id","r3"`, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, sub, tool, _ := controlHead([]byte(tc.line))
			if id != tc.id || sub != tc.sub || tool != tc.toolNam {
				t.Errorf("controlHead = %q %q %q; want %q %q %q", id, sub, tool, tc.id, tc.sub, tc.toolNam)
			}
		})
	}
}
