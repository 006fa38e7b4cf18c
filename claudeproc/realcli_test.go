package claudeproc

import (
	"context"
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
	if si.SessionID == "" || si.SessionID != res.SessionID || si.ClaudeCodeVersion != testcli.BinVersion(t, c.bin) {
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

// TestRealCLITurnUsage: each result carries model_usage_since_last_result,
// the turn's own usage per model, which no published SDK type declares and
// which the budgets rely on (Result.TurnCostUSD; a CLI without it makes a
// turn cost the session's total). A CLI that drops it fails here, not on a
// user's bill: the second turn's cost is its own, below the session's.
func TestRealCLITurnUsage(t *testing.T) {
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return reply(fakeanthropic.Text("ok: " + req.LastUserText()))
	})
	p, r := c.start(nil)
	from := 0
	for i, prompt := range []string{"one", "two"} {
		if err := p.SendText(prompt); err != nil {
			t.Fatal(err)
		}
		ev, idx := r.waitFor(from, "result of "+prompt, isResult)
		from = idx + 1
		res := ev.(*Result)
		if len(res.ModelUsageSinceLastResult) == 0 {
			t.Fatalf("turn %d: no model_usage_since_last_result in %s", i+1, describe(res))
		}
		var tokens int64
		for _, u := range res.ModelUsageSinceLastResult {
			tokens += u.InputTokens + u.OutputTokens
		}
		turn := res.TurnCostUSD()
		if tokens == 0 || turn <= 0 {
			t.Errorf("turn %d: usage since the last result: %d tokens, $%g", i+1, tokens, turn)
		}
		if i == 1 && turn >= res.TotalCostUSD {
			t.Errorf("turn 2 costs $%g, the session $%g: not the turn's own", turn, res.TotalCostUSD)
		}
	}
}
