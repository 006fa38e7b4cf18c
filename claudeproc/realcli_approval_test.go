package claudeproc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// Real-CLI tests of permission requests (can_use_tool) and
// AskUserQuestion. The harness is in realcli_test.go.

// bashScript: the first request of each prompt asks for a Bash command; the
// request with its tool result gets a text answer quoting the result.
func bashScript(command string) fakeanthropic.Script {
	return func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return reply(fakeanthropic.Text("tool said: " + trs[0].Content))
		}
		return reply(fakeanthropic.Text("Running it."), fakeanthropic.ToolUse("Bash", map[string]string{"command": command, "description": "make a file"}))
	}
}

func TestRealCLIBashApprovalAllowed(t *testing.T) {
	c := newCLI(t, bashScript("touch allowed.txt && echo made allowed.txt"))
	p, r := c.start(nil)
	if err := p.SendText("make the file"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "can_use_tool", isCanUseTool)
	req := ev.(*ControlRequest)
	if req.CanUseTool.ToolName != "Bash" || !strings.Contains(string(req.CanUseTool.Input), "touch allowed.txt") || req.CanUseTool.ToolUseID == "" {
		t.Fatalf("request = %s", describe(req))
	}
	if err := p.Allow(req.RequestID, nil, nil); err != nil {
		t.Fatal(err)
	}
	ev, _ = r.waitFor(0, "result", isResult)
	if res := ev.(*Result); res.IsError || !strings.Contains(res.Result, "made allowed.txt") {
		t.Errorf("result = %s", describe(res))
	}
	if _, err := os.Stat(filepath.Join(c.dir, "allowed.txt")); err != nil {
		t.Errorf("file not created: %v", err)
	}
}

func TestRealCLIBashApprovalDenied(t *testing.T) {
	c := newCLI(t, bashScript("touch denied.txt"))
	p, r := c.start(nil)
	if err := p.SendText("make the file"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "can_use_tool", isCanUseTool)
	if err := p.Deny(ev.(*ControlRequest).RequestID, "not on a Friday", false); err != nil {
		t.Fatal(err)
	}
	ev, _ = r.waitFor(0, "result", isResult)
	res := ev.(*Result)
	if res.IsError || len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Bash" {
		t.Errorf("result = %s", describe(res))
	}
	reqs := c.api.Requests()
	tr := reqs[len(reqs)-1].ToolResults()
	if len(tr) != 1 || !tr[0].IsError || !strings.Contains(tr[0].Content, "not on a Friday") {
		t.Errorf("model saw tool results %+v", tr)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "denied.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("denied command ran: %v", err)
	}
}

func TestRealCLIAllowWithUpdatedPermissions(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) > 0 {
			return reply(fakeanthropic.Text("done"))
		}
		name := strings.TrimPrefix(req.LastUserText(), "make ")
		return reply(fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch " + name}))
	})
	p, r := c.start(nil)
	if err := p.SendText("make first.txt"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "can_use_tool", isCanUseTool)
	rule := json.RawMessage(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"session"}`)
	if err := p.Allow(ev.(*ControlRequest).RequestID, nil, []PermissionUpdate{rule}); err != nil {
		t.Fatal(err)
	}
	_, first := r.waitFor(0, "first result", isResult)
	if err := p.SendText("make second.txt"); err != nil {
		t.Fatal(err)
	}
	ev, _ = r.waitFor(first+1, "second result", isResult)
	if ev.(*Result).IsError {
		t.Errorf("second result = %s", describe(ev))
	}
	for _, ev := range r.snapshot()[first+1:] {
		if isCanUseTool(ev) {
			t.Errorf("asked again despite the session rule: %s", describe(ev))
		}
	}
	for _, f := range []string{"first.txt", "second.txt"} {
		if _, err := os.Stat(filepath.Join(c.dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestRealCLIAskUserQuestion(t *testing.T) {
	const q = "Which color should the widget be?"
	questions := []map[string]any{{
		"question": q, "header": "Color", "multiSelect": false,
		"options": []map[string]string{{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "calm"}},
	}}
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return reply(fakeanthropic.Text("answer was: " + trs[0].Content))
		}
		return reply(fakeanthropic.ToolUse("AskUserQuestion", map[string]any{"questions": questions}))
	})
	p, r := c.start(nil)
	if err := p.SendText("pick a color"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "can_use_tool", isCanUseTool)
	cr := ev.(*ControlRequest)
	if cr.CanUseTool.ToolName != "AskUserQuestion" || !cr.CanUseTool.RequiresUserInteraction {
		t.Fatalf("request = %s", describe(cr))
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(cr.CanUseTool.Input, &in); err != nil {
		t.Fatal(err)
	}
	answered, _ := json.Marshal(map[string]any{"questions": in["questions"], "answers": map[string]string{q: "Blue"}})
	if err := p.Allow(cr.RequestID, answered, nil); err != nil {
		t.Fatal(err)
	}
	r.waitFor(0, "result", isResult)
	reqs := c.api.Requests()
	tr := reqs[len(reqs)-1].ToolResults()
	if len(tr) != 1 || !strings.Contains(tr[0].Content, `"`+q+`"="Blue"`) {
		t.Errorf("model saw %+v", tr)
	}
}
