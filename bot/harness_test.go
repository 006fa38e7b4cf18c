package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/bot/limits"
	"github.com/claudeops/claudeops/bot/mcpservers"
	"github.com/claudeops/claudeops/bot/memory"
	"github.com/claudeops/claudeops/bot/reviews"
	"github.com/claudeops/claudeops/bot/scheduled"
	"github.com/claudeops/claudeops/bot/scopes"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/workspaces"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// waitTimeout bounds the waits of the tests with the real CLI.
const waitTimeout = testkit.Long

// testConfig is what a test sets of the bot: its Config, and the
// configuration of the extensions every test bot gets, as cmd gives them.
type testConfig struct {
	Config
	Limits              limits.Config
	Workspace           workspaces.Config
	MaxSchedulesPerUser int
	// MCP is the operator's MCP servers and plugins (nil: none).
	MCP *mcpservers.Catalog

	// ticks, when set, are the turn views' refresh (view.tick) in place of
	// a 5 s ticker: a test sends them (tick).
	ticks chan time.Time

	// sched is the schedules extension bot made (startScheduler connects
	// it to a scheduler).
	sched *scheduled.Extension
}

// bot is the bot's Config with its extensions over st, connected as cmd
// connects them, in cmd's order.
func (c *testConfig) bot(st *store.Store) Config {
	cfg := c.Config
	ws := c.Workspace
	ws.Channels = st
	if st != nil {
		ws.Pulls = st
	}
	wsExt := workspaces.New(ws)
	c.sched = scheduled.New(scheduled.Config{MaxPerUser: c.MaxSchedulesPerUser, Repos: wsExt})
	var channels mcpservers.Channels
	var kept scopes.Store
	var facts memory.Facts
	if st != nil {
		channels, kept, facts = st, st, st
	}
	cfg.Extensions = []thread.Extension{limits.New(c.Limits), wsExt, c.sched, mcpservers.New(c.MCP, channels), scopes.New(kept), memory.New(memory.Config{Facts: facts}), reviews.New()}
	return cfg
}

// harness runs a bot with the console adapter, the real CLI and the fake
// model API. Its HOME and database survive restart().
type harness struct {
	t       testing.TB
	api     *fakeanthropic.Server
	bin     string
	home    string
	workdir string
	db      string
	mod     func(*testConfig)
	// wrap, when set, stands between the bot and the console adapter.
	wrap func(adapters.Adapter) adapters.Adapter
	// wrapStart, when set, stands between the bot and the CLI processes it
	// starts (set before the first message).
	wrapStart func(starter) starter

	st     *store.Store
	b      *Bot
	sched  *scheduled.Extension // the bot's schedules extension
	in     *io.PipeWriter
	out    *testkit.Output
	cancel context.CancelFunc
	done   chan struct{}
	cursor int
}

func newHarness(t testing.TB, script fakeanthropic.Script, mod func(*testConfig)) *harness {
	t.Helper()
	return newHarnessWrapped(t, script, mod, nil)
}

// newHarnessWrapped is newHarness with wrap around the console adapter.
func newHarnessWrapped(t testing.TB, script fakeanthropic.Script, mod func(*testConfig), wrap func(adapters.Adapter) adapters.Adapter) *harness {
	t.Helper()
	return newHarnessAt(t, script, mod, wrap, filepath.Join(t.TempDir(), "claudeops.db"))
}

// newHarnessAt is newHarnessWrapped with the database at db (on a small
// file system, say).
func newHarnessAt(t testing.TB, script fakeanthropic.Script, mod func(*testConfig), wrap func(adapters.Adapter) adapters.Adapter, db string) *harness {
	t.Helper()
	h := &harness{
		wrap:    wrap,
		t:       t,
		bin:     testcli.Bin(t),
		home:    t.TempDir(),
		workdir: t.TempDir(),
		db:      db,
		mod:     mod,
	}
	h.api = fakeanthropic.Start(t, script)
	h.startBot()
	t.Cleanup(h.stopBot)
	return h
}

func (h *harness) env() []string {
	return testkit.CLIEnv(h.home, h.api.URL, "CLAUDE_CODE_MAX_RETRIES=1")
}

// startBot runs the bot with the real CLI (again, after stopBot).
func (h *harness) startBot() {
	h.t.Helper()
	cfg := testConfig{Config: Config{
		Runner:          testrunner.Runner(h.t, h.home, filepath.Dir(h.db)),
		ClaudeBin:       h.bin,
		Env:             h.env(),
		Workdir:         h.workdir,
		AllowedUsers:    []string{console.OperatorID, "bob"},
		Admins:          []string{console.OperatorID},
		MaxSessions:     4,
		IdleTimeout:     time.Hour,
		ApprovalTimeout: time.Hour,
		StopGrace:       3 * time.Second,
	}}
	if testing.Verbose() {
		cfg.Logger = nil
	}
	h.run(cfg, nil)
}

// run runs a bot on cfg (then h.mod) over the store at h.db, with the
// console over a pipe. cli, when set, is the bot's claude, and the
// console goes by the bot's clock (the golden tests' footers).
func (h *harness) run(cfg testConfig, cli *fakeCLI) {
	h.t.Helper()
	st, err := store.Open(context.Background(), h.db)
	if err != nil {
		h.t.Fatal(err)
	}
	if h.mod != nil {
		h.mod(&cfg)
	}
	pr, pw := io.Pipe()
	out := h.out
	if out == nil {
		out = testkit.NewOutput() // kept across restarts, like a terminal
	}
	opts := console.Options{In: pr, Out: out, TestHooks: true}
	b := New(cfg.bot(st), st)
	h.sched = cfg.sched
	if cli != nil {
		opts.Now, b.start = cfg.Now, cli.start
	}
	con := console.New(opts)
	if cfg.ticks != nil {
		b.ticker = func(time.Duration) (<-chan time.Time, func()) { return cfg.ticks, func() {} }
	}
	if h.wrapStart != nil {
		b.start = h.wrapStart(b.start)
	}
	var ad adapters.Adapter = con
	if h.wrap != nil {
		ad = h.wrap(con)
	}
	b.AddAdapter(ad)
	if err := b.Recover(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = b.Run(ctx) }()
	go func() { defer wg.Done(); _ = con.Run(ctx, b.Deliver) }()
	go func() { wg.Wait(); close(done) }()
	h.st, h.b, h.in, h.out, h.cancel, h.done = st, b, pw, out, cancel, done
}

// stopBot shuts the bot down in order and closes the store.
func (h *harness) stopBot() {
	if h.b == nil {
		return
	}
	h.cancel()
	h.in.Close()
	select {
	case <-h.done:
	case <-time.After(time.Minute):
		h.t.Error("bot did not shut down within a minute")
	}
	if err := h.st.Close(); err != nil {
		h.t.Error(err)
	}
	h.b = nil
}

func (h *harness) restart() {
	h.stopBot()
	h.startBot()
}

// say types a line at the console.
func (h *harness) say(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("type %q: %v", line, err)
	}
}

// expect waits for an output line (after the cursor) matching the regexp,
// moves the cursor past it, and returns it with its submatches.
func (h *harness) expect(pattern string) []string {
	h.t.Helper()
	return h.out.Expect(h.t, &h.cursor, waitTimeout, pattern)
}

// tick hands n ticks to the views' refresh, through ticks (testConfig),
// and returns once the worker has handled them: it takes one at a time, so
// once it takes one more, the n before it are done.
func (h *harness) tick(ticks chan time.Time, n int) {
	h.t.Helper()
	for i := range n + 1 {
		select {
		case ticks <- time.Now():
		case <-time.After(waitTimeout):
			h.t.Fatalf("tick %d of %d: no view takes ticks", i+1, n)
		}
	}
}

// absent checks that no line since from matches.
func (h *harness) absent(from int, pattern string) {
	h.t.Helper()
	re := regexp.MustCompile(pattern)
	for _, l := range h.out.Lines()[from:] {
		if re.MatchString(l) {
			h.t.Errorf("unexpected line %q", l)
		}
	}
}

// script is the fake model used by the end-to-end tests. It acts on the
// last thing the user typed:
//
//	run <command>     asks to run a Bash command, then reports its output
//	runq <json str>   the same with a command given as a JSON string (lines)
//	run2 <a> ;; <b>   asks to run two Bash commands in one reply
//	write <path> <t>  asks to write t to path (the Write tool)
//	agents2 <a> ;; <b> starts two background subagents with prompts a and b
//	ask one / ask two asks a single-select question / two multi-select ones
//	slow <word>       streams slowly until released (hold channel)
//	recall            says whether the history mentions "pineapple"
//	sendfile <p> [c]  calls the bot's send_file tool on path p, comment c
//	readthread        calls the bot's read_thread tool
//	propose <fact>    calls the bot's remember tool with fact
//	anything else     answers "ok: <text>"
func script(hold <-chan struct{}) fakeanthropic.Script {
	return func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("tool result: " + trs[0].Content)}}
		}
		all := req.LastUserText()
		text := all
		if i := strings.LastIndex(text, "\n"); i >= 0 {
			// After "[Request interrupted by user]", or the last of merged
			// queued messages.
			text = text[i+1:]
		}
		switch {
		case strings.HasPrefix(text, "runq "):
			var cmd string
			if err := json.Unmarshal([]byte(strings.TrimPrefix(text, "runq ")), &cmd); err != nil {
				return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("bad runq: " + err.Error())}}
			}
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": cmd, "description": "as asked"})}}
		case strings.HasPrefix(text, "run2 "):
			a, b, _ := strings.Cut(strings.TrimPrefix(text, "run2 "), " ;; ")
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{
				fakeanthropic.ToolUse("Bash", map[string]string{"command": a, "description": "first"}),
				fakeanthropic.ToolUse("Bash", map[string]string{"command": b, "description": "second"}),
			}}
		case strings.HasPrefix(text, "agents2 "):
			a, b, _ := strings.Cut(strings.TrimPrefix(text, "agents2 "), " ;; ")
			agent := func(n int, prompt string) fakeanthropic.Block {
				return fakeanthropic.ToolUse("Agent", map[string]any{"description": fmt.Sprintf("agent %d", n), "prompt": prompt, "subagent_type": "general-purpose", "run_in_background": true})
			}
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{agent(1, a), agent(2, b)}}
		case strings.HasPrefix(text, "write "):
			path, content, _ := strings.Cut(strings.TrimPrefix(text, "write "), " ")
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Write", map[string]string{"file_path": path, "content": content})}}
		case strings.HasPrefix(text, "run "):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": strings.TrimPrefix(text, "run "), "description": "as asked"})}}
		case strings.HasPrefix(text, "sendfile "):
			path, comment, _ := strings.Cut(strings.TrimPrefix(text, "sendfile "), " ")
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("mcp__claudeops__send_file", map[string]string{"path": path, "comment": comment})}}
		case strings.HasPrefix(text, "propose "):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("mcp__claudeops__remember", map[string]string{"fact": strings.TrimPrefix(text, "propose ")})}}
		case text == "readthread":
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("mcp__claudeops__read_thread", map[string]int{"limit": 20})}}
		case text == "ask one":
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("AskUserQuestion", json.RawMessage(askOne))}}
		case text == "ask two":
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("AskUserQuestion", json.RawMessage(askTwo))}}
		case strings.HasPrefix(text, "slow"):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("slow answer for " + text + " that goes on and on")}, Hold: hold, ChunkSize: 8}
		case text == "recall":
			if strings.Contains(req.Transcript(), "pineapple") {
				return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I remember pineapple")}}
			}
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I remember nothing")}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok: " + strings.ReplaceAll(all, "\n", " / "))}}
	}
}

const askOne = `{"questions":[{"question":"Which color should the widget be?","header":"Color","multiSelect":false,
 "options":[{"label":"Red","description":"warm"},{"label":"Blue","description":"calm"},{"label":"Green","description":"eco"}]}]}`

const askTwo = `{"questions":[
 {"question":"Which features?","header":"Features","multiSelect":true,
  "options":[{"label":"Logging","description":"logs"},{"label":"Metrics","description":"numbers"},{"label":"Tracing","description":"spans"}]},
 {"question":"Which environments?","header":"Envs","multiSelect":true,
  "options":[{"label":"staging","description":"s"},{"label":"production","description":"p"}]}]}`
