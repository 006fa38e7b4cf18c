package claudeproc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
)

// These tests run the REAL Claude Code CLI (pinned, installed by
// scripts/test) against the fake Messages API on loopback.

const eventTimeout = 60 * time.Second

// recorder drains a process's events and lets a test wait for one.
type recorder struct {
	t      *testing.T
	mu     sync.Mutex
	events []Event
	notify chan struct{}
	done   chan struct{}
}

func record(t *testing.T, p *Process) *recorder {
	r := &recorder{t: t, notify: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ev := range p.Events() {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
			select {
			case r.notify <- struct{}{}:
			default:
			}
		}
	}()
	return r
}

// waitFor returns the first event after index from that matches pred, and
// its index; it fails the test after eventTimeout.
func (r *recorder) waitFor(from int, what string, pred func(Event) bool) (Event, int) {
	r.t.Helper()
	deadline := time.NewTimer(eventTimeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if pred(r.events[i]) {
				ev := r.events[i]
				r.mu.Unlock()
				return ev, i
			}
		}
		n := len(r.events)
		r.mu.Unlock()
		select {
		case <-r.notify:
		case <-r.done:
			r.mu.Lock()
			more := len(r.events) > n
			r.mu.Unlock()
			if !more {
				r.t.Fatalf("process ended while waiting for %s; events:\n%s", what, r.dump())
			}
		case <-deadline.C:
			r.t.Fatalf("timed out waiting for %s; events:\n%s", what, r.dump())
		}
	}
}

func (r *recorder) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, ev := range r.events {
		b.WriteString("  " + describe(ev) + "\n")
	}
	return b.String()
}

func (r *recorder) snapshot() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

func isResult(ev Event) bool { _, ok := ev.(*Result); return ok }

func isCanUseTool(ev Event) bool {
	c, ok := ev.(*ControlRequest)
	return ok && c.CanUseTool != nil
}

// cli is one real CLI session environment: HOME, cwd and the fake API.
type cli struct {
	t    *testing.T
	bin  string
	home string
	dir  string
	api  *fakeanthropic.Server
}

func newCLI(t *testing.T, script fakeanthropic.Script) *cli {
	t.Helper()
	bin := testcli.Bin(t)
	c := &cli{t: t, bin: bin, home: t.TempDir(), dir: t.TempDir()}
	c.api = fakeanthropic.Start(t, script)
	return c
}

// env is the environment the bot would give the CLI: the allowlist applied
// to a parent environment that also holds secrets that must not pass.
func (c *cli) env() []string {
	parent := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + c.home,
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + c.api.URL,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
		"SLACK_BOT_TOKEN=xoxb-must-not-leak",
		"MATRIX_ACCESS_TOKEN=syt-must-not-leak",
	}
	return BuildEnv(parent, nil)
}

func (c *cli) start(mod func(*Options)) (*Process, *recorder) {
	c.t.Helper()
	opts := Options{Bin: c.bin, Dir: c.dir, Env: c.env(), StopGrace: 3 * time.Second, RequestTimeout: 30 * time.Second}
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
	r := record(c.t, p)
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		p.Close(ctx)
		<-r.done
	})
	return p, r
}

func textOf(events []Event, from int) string {
	var b strings.Builder
	for _, ev := range events[from:] {
		if s, ok := ev.(*StreamEvent); ok && s.DeltaType == "text_delta" {
			b.WriteString(s.Delta)
		}
	}
	return b.String()
}

// scriptByPrompt answers each request according to the last user text.
func reply(blocks ...fakeanthropic.Block) fakeanthropic.Reply {
	return fakeanthropic.Reply{Blocks: blocks}
}

func TestRealCLIStreamedText(t *testing.T) {
	const answer = "Streaming works: **bold**, `code`, and a long enough sentence to need several deltas."
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return reply(fakeanthropic.Text(answer))
	})
	p, r := c.start(nil)
	if err := p.SendText("hello there"); err != nil {
		t.Fatal(err)
	}
	ev, _ := r.waitFor(0, "result", isResult)
	res := ev.(*Result)
	if res.IsError || res.Subtype != "success" || res.Result != answer || res.NumTurns != 1 {
		t.Errorf("result = %s", describe(res))
	}
	events := r.snapshot()
	if got := textOf(events, 0); got != answer {
		t.Errorf("streamed text = %q, want %q", got, answer)
	}
	init, _ := r.waitFor(0, "init", func(ev Event) bool { _, ok := ev.(*SystemInit); return ok })
	si := init.(*SystemInit)
	if si.SessionID == "" || si.SessionID != res.SessionID || si.ClaudeCodeVersion != TestedVersion.String() {
		t.Errorf("init = %s session %q", describe(si), si.SessionID)
	}
	var stopped *ContentBlock
	for _, ev := range events {
		if s, ok := ev.(*StreamEvent); ok && s.EventType == "content_block_stop" && s.Block != nil {
			stopped = s.Block
		}
	}
	if stopped == nil || stopped.Text != answer {
		t.Errorf("reassembled block = %+v", stopped)
	}
	if got := c.api.Requests()[0].LastUserText(); got != "hello there" {
		t.Errorf("model saw %q", got)
	}
	if p.InTurn() {
		t.Error("InTurn after result")
	}
}

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
	if resp.ClaudeCodeVersion != TestedVersion.String() || resp.PID == 0 {
		t.Errorf("initialize response: version %q pid %d", resp.ClaudeCodeVersion, resp.PID)
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
// joins the same turn; the model sees it as a system message at its next
// request (CLAUDE_CLI.md §8).
func TestRealCLIMessageInjectedIntoToolStep(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) > 0 {
			return reply(fakeanthropic.Text("system said: " + strings.Join(req.SystemMessages(), " | ")))
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
	if err := p.Send(UserMessage{Text: "also mention the weather", UUID: "33333333-3333-4333-8333-333333333333"}); err != nil {
		t.Fatal(err)
	}
	ev, idx := r.waitFor(0, "result", isResult)
	if res := ev.(*Result); !strings.Contains(res.Result, "also mention the weather") {
		t.Errorf("result = %s", describe(res))
	}
	// Injected, not a turn of its own: no second result follows soon.
	for _, ev := range r.snapshot()[idx+1:] {
		if isResult(ev) {
			t.Errorf("extra result: %s", describe(ev))
		}
	}
}
