package claudeproc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
)

// Real-CLI tests of turns and control requests: interrupt, messages while
// a turn runs, resume, model and mode, initialize, close. The harness is in
// realcli_test.go.

func TestRealCLIInterruptThenNextTurn(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.Contains(req.LastUserText(), "slow") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("This will take a very long time to finish...")}, Hold: hold, ChunkSize: 10}
		}
		return reply(fakeanthropic.Text("fresh answer"))
	})
	p, r := c.start(nil)
	if err := p.SendText("be slow"); err != nil {
		t.Fatal(err)
	}
	r.waitFor(0, "first text delta", func(ev Event) bool {
		s, ok := ev.(*StreamEvent)
		return ok && s.DeltaType == "text_delta"
	})
	if !p.InTurn() {
		t.Error("not InTurn while streaming")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.Interrupt(ctx, false); err != nil {
		t.Fatalf("interrupt: %v", err)
	}
	ev, first := r.waitFor(0, "interrupted result", isResult)
	if res := ev.(*Result); !res.IsError || res.Subtype != "error_during_execution" {
		t.Errorf("interrupted result = %s", describe(res))
	}
	if err := p.SendText("now answer"); err != nil {
		t.Fatal(err)
	}
	ev, _ = r.waitFor(first+1, "next result", isResult)
	if res := ev.(*Result); res.IsError || res.Result != "fresh answer" {
		t.Errorf("next result = %s", describe(res))
	}
	select {
	case <-p.Exited():
		t.Error("process exited after interrupt")
	default:
	}
}

func TestRealCLIMessageWhileTurnRuns(t *testing.T) {
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if req.LastUserText() == "first" {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("first answer, slowly")}, Hold: hold, ChunkSize: 5}
		}
		return reply(fakeanthropic.Text("second answer to: " + req.LastUserText()))
	})
	p, r := c.start(nil)
	if err := p.Send(UserMessage{Text: "first", UUID: "11111111-1111-4111-8111-111111111111"}); err != nil {
		t.Fatal(err)
	}
	r.waitFor(0, "first text delta", func(ev Event) bool {
		s, ok := ev.(*StreamEvent)
		return ok && s.DeltaType == "text_delta"
	})
	const second = "22222222-2222-4222-8222-222222222222"
	if err := p.Send(UserMessage{Text: "follow-up", UUID: second}); err != nil {
		t.Fatal(err)
	}
	lifecycle := func(state string) func(Event) bool {
		return func(ev Event) bool {
			l, ok := ev.(*CommandLifecycle)
			return ok && l.CommandUUID == second && l.State == state
		}
	}
	r.waitFor(0, "queued", lifecycle("queued"))
	release()
	_, first := r.waitFor(0, "first result", isResult)
	r.waitFor(0, "started", lifecycle("started"))
	ev, _ := r.waitFor(first+1, "second result", isResult)
	if res := ev.(*Result); res.IsError || !strings.Contains(res.Result, "follow-up") {
		t.Errorf("second result = %s", describe(res))
	}
}

func TestRealCLIResume(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.Contains(req.Transcript(), "pineapple") && strings.Contains(req.LastUserText(), "which word") {
			return reply(fakeanthropic.Text("you said pineapple"))
		}
		return reply(fakeanthropic.Text("noted"))
	})
	p, r := c.start(nil)
	if err := p.SendText("remember the word pineapple"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "result", isResult)
	session := ev.(*Result).SessionID
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if info := p.Close(ctx); info.Code != 0 || info.Signal != "" {
		t.Errorf("close: %+v", info)
	}

	p2, r2 := c.start(func(o *Options) { o.Resume = session })
	if err := p2.SendText("which word did I say?"); err != nil {
		t.Fatal(err)
	}
	ev, _ = r2.waitFor(0, "resumed result", isResult)
	res := ev.(*Result)
	if res.SessionID != session || res.Result != "you said pineapple" {
		t.Errorf("resumed result = %s (session %s, want %s)", describe(res), res.SessionID, session)
	}
}

func TestRealCLISetModelAndPermissionMode(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return reply(fakeanthropic.Text("model " + req.Model))
	})
	p, r := c.start(nil)
	if err := p.SendText("hi"); err != nil {
		t.Fatal(err)
	}
	_, first := r.waitFor(0, "result", isResult)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if mode, err := p.SetPermissionMode(ctx, "acceptEdits"); err != nil || mode != "acceptEdits" {
		t.Errorf("set_permission_mode acceptEdits = %q, %v", mode, err)
	}
	_, err := p.SetPermissionMode(ctx, "nonsense")
	var ce *ControlError
	if !errors.As(err, &ce) || ce.Code != "invalid_mode" {
		t.Errorf("invalid mode error = %v", err)
	}
	if model, err := p.SetModel(ctx, "claude-sonnet-4-5"); err != nil || model != "claude-sonnet-4-5" {
		t.Errorf("set_model = %q, %v", model, err)
	}
	if err := p.SendText("which model?"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(first+1, "second result", isResult)
	if res := ev.(*Result); res.Result != "model claude-sonnet-4-5" {
		t.Errorf("after set_model: %s", describe(res))
	}
}

func TestRealCLIInitializeAppendsSystemPrompt(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return reply(fakeanthropic.Text("ok"))
	})
	p, r := c.start(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := p.Initialize(ctx, InitializeRequest{AppendSystemPrompt: "You are in the #ops channel."})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if want := testcli.BinVersion(t, c.bin); resp.ClaudeCodeVersion != want || resp.PID == 0 {
		t.Errorf("initialize response: version %q (want %s) pid %d", resp.ClaudeCodeVersion, want, resp.PID)
	}
	if err := p.SendText("hi"); err != nil {
		t.Fatal(err)
	}
	r.waitFor(0, "result", isResult)
	if sys := strings.Join(c.api.Requests()[0].System, "\n"); !strings.Contains(sys, "#ops channel") {
		t.Errorf("appended prompt missing from system prompt")
	}
}

func TestRealCLICloseMidTurn(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("never finishing")}, Hold: hold}
	})
	p, r := c.start(nil)
	if err := p.SendText("go"); err != nil {
		t.Fatal(err)
	}
	r.waitFor(0, "first delta", func(ev Event) bool {
		s, ok := ev.(*StreamEvent)
		return ok && s.DeltaType == "text_delta"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	info := p.Close(ctx)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("close took %s", took)
	}
	ev, _ := r.waitFor(0, "exited", func(ev Event) bool { _, ok := ev.(*Exited); return ok })
	if ev.(*Exited).Info.Reason != info.Reason {
		t.Errorf("exit reasons differ: %q vs %q", ev.(*Exited).Info.Reason, info.Reason)
	}
	// The interrupt ends the turn cleanly, so the CLI exits by itself.
	if info.Signal != "" {
		t.Errorf("needed a signal: %+v", info)
	}
}

// TestRealCLIMessageInjectedIntoToolStep: a message sent while a tool runs
// joins the same turn; the model sees it at its next request, in one of two
// forms: 2.1.309 and 2.1.330 send it as a message of role "system", 2.1.332
// as a text block beside the tool result in the user message that carries
// it. Either is accepted; the model must see it exactly once.
func TestRealCLIMessageInjectedIntoToolStep(t *testing.T) {
	const injected = "also mention the weather"
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) > 0 {
			var seen []string
			for _, m := range req.SystemMessages() {
				if strings.Contains(m, injected) {
					seen = append(seen, "system: "+injected)
				}
			}
			if strings.Contains(req.LastUserText(), injected) {
				seen = append(seen, "beside the tool result: "+injected)
			}
			return reply(fakeanthropic.Text("seen as " + strings.Join(seen, " | ")))
		}
		return reply(fakeanthropic.ToolUse("Bash", map[string]string{"command": "sleep 2", "description": "wait"}))
	})
	p, r := c.start(nil)
	if err := p.SendText("wait a bit"); err != nil {
		t.Fatal(err)
	}
	r.waitFor(0, "Bash tool_use", func(ev Event) bool {
		a, ok := ev.(*Assistant)
		return ok && a.Block.Type == "tool_use" && a.Block.Name == "Bash"
	})
	if err := p.Send(UserMessage{Text: injected, UUID: "33333333-3333-4333-8333-333333333333"}); err != nil {
		t.Fatal(err)
	}
	ev, idx := r.waitFor(0, "result", isResult)
	if res := ev.(*Result); strings.Count(res.Result, injected) != 1 {
		t.Errorf("result = %s; want the message seen once, in one form", describe(res))
	} else {
		t.Logf("the model saw it %s", res.Result)
	}
	// Injected, not a turn of its own: no second result follows soon.
	for _, ev := range r.snapshot()[idx+1:] {
		if isResult(ev) {
			t.Errorf("extra result: %s", describe(ev))
		}
	}
}
