package bot

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/claudeproc"
)

// Tests of the bot against a fake claude process that replays real CLI
// transcripts (claudeproc/testdata/cli-2.1.330): fast, and able to produce
// what the real CLI can't be made to do on cue (a crash mid-turn, a resume
// that fails, a start that hangs).

const transcriptDir = "../claudeproc/testdata/cli-2.1.330"

// replayWait bounds every wait of these tests; they take milliseconds when
// they pass.
const replayWait = 15 * time.Second

// replayNow is the clock of the golden tests: every elapsed time the bot
// measures itself is zero, and the footers show the durations the fixtures
// carry.
func replayNow() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// replayStep is one transcript line and what must happen before it is replayed.
type replayStep struct {
	ev claudeproc.Event
	// needSend: the line starts a turn a user message started; it waits for
	// a Send.
	needSend bool
	// gate: the request id of a can_use_tool whose answer this line is the
	// consequence of (its tool result); it waits for Allow or Deny.
	gate string
	// reply: the CLI's answer to one of our control requests (interrupt);
	// it waits for that request and is returned to it, not emitted.
	reply bool
	// hold, when set, must be closed by the test first.
	hold chan struct{}
}

// loadTranscript decodes a transcript into steps. auto lists the turns
// (0-based, counted by results) that the CLI starts by itself.
func loadTranscript(t *testing.T, name string, auto ...int) []replayStep {
	t.Helper()
	f, err := os.Open(filepath.Join(transcriptDir, name+".ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := claudeproc.NewReader(f, 0, nil)
	var steps []replayStep
	turn, turnStart := 0, true
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s := replayStep{ev: ev}
		if turnStart {
			s.needSend = !slices.Contains(auto, turn)
			turnStart = false
		}
		if _, ok := ev.(*claudeproc.ControlResponse); ok {
			s.reply = true
		}
		if _, ok := ev.(*claudeproc.Result); ok {
			turn++
			turnStart = true
		}
		steps = append(steps, s)
	}
	// An answer to can_use_tool gates the first line that reports on the
	// tool (its result, or a denial): the CLI goes on with everything else
	// while it waits, as it does for real.
	for i, s := range steps {
		cr, ok := s.ev.(*claudeproc.ControlRequest)
		if !ok || cr.CanUseTool == nil {
			continue
		}
		at := i + 1
		for j := i + 1; j < len(steps); j++ {
			if refersTo(steps[j].ev, cr.CanUseTool.ToolUseID, cr.RequestID) {
				at = j
				break
			}
		}
		if at < len(steps) {
			steps[at].gate = cr.RequestID
		}
	}
	return steps
}

func refersTo(ev claudeproc.Event, toolUseID, requestID string) bool {
	switch e := ev.(type) {
	case *claudeproc.User:
		for _, r := range e.ToolResults {
			if r.ToolUseID == toolUseID {
				return true
			}
		}
	case *claudeproc.PermissionDenied:
		return e.ToolUseID == toolUseID
	case *claudeproc.ControlCancelRequest:
		return e.RequestID == requestID
	}
	return false
}

// fakeCLI is the starter: it records the options of every start and makes
// a fakeProc for it.
type fakeCLI struct {
	t    *testing.T
	ctx  context.Context
	make func(n int, o claudeproc.Options) (*fakeProc, error)
	// block, when set, is waited for by the first start.
	block   chan struct{}
	called  chan struct{}
	mu      sync.Mutex
	options []claudeproc.Options
	procs   []*fakeProc
	changed chan struct{}
}

func newFakeCLI(t *testing.T, mk func(n int, o claudeproc.Options) (*fakeProc, error)) *fakeCLI {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &fakeCLI{t: t, ctx: ctx, make: mk, called: make(chan struct{}, 16), changed: make(chan struct{}, 1)}
}

// replaying makes every process replay the named transcript.
func replaying(t *testing.T, name string, auto ...int) func(int, claudeproc.Options) (*fakeProc, error) {
	steps := loadTranscript(t, name, auto...)
	return func(_ int, o claudeproc.Options) (*fakeProc, error) {
		return newFakeProc(context.Background(), o, slices.Clone(steps)), nil
	}
}

func (c *fakeCLI) start(ctx context.Context, o claudeproc.Options) (process, error) {
	c.mu.Lock()
	n := len(c.options)
	c.options = append(c.options, o)
	block := c.block
	c.mu.Unlock()
	c.called <- struct{}{}
	if block != nil && n == 0 {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p, err := c.make(n, o)
	if err != nil {
		return nil, err
	}
	p.ctx = c.ctx
	p.run()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return p, nil
}

func (c *fakeCLI) started() []claudeproc.Options {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.options)
}

// proc waits for the n-th process (0-based).
func (c *fakeCLI) proc(n int) *fakeProc {
	c.t.Helper()
	deadline := time.After(replayWait)
	for {
		c.mu.Lock()
		if len(c.procs) > n {
			p := c.procs[n]
			c.mu.Unlock()
			return p
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("claude process %d was never started", n)
		}
	}
}

// newReplayHarness runs the bot as harness.startBot does (console over a
// pipe, SQLite in a temp dir), with the fake CLI as its starter.
func newReplayHarness(t *testing.T, cli *fakeCLI, mod func(*testConfig)) *harness {
	t.Helper()
	h := &harness{
		t:       t,
		workdir: t.TempDir(),
		db:      filepath.Join(t.TempDir(), "claudeops.db"),
		mod:     mod,
	}
	cfg := testConfig{Config: Config{
		ClaudeBin:       "claude-fake",
		Env:             []string{"PATH=/usr/bin:/bin"},
		Workdir:         h.workdir,
		AllowedUsers:    []string{console.OperatorID, "bob"},
		Admins:          []string{console.OperatorID},
		MaxSessions:     4,
		IdleTimeout:     time.Hour,
		ApprovalTimeout: time.Hour,
		StopGrace:       time.Second,
	}}
	h.run(cfg, cli)
	t.Cleanup(h.stopBot)
	return h
}

// waitBotIdle waits until the bot has nothing running or queued.
func waitBotIdle(t *testing.T, b *Bot) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), replayWait)
	defer cancel()
	b.WaitIdle(ctx)
	if ctx.Err() != nil {
		t.Fatal("the bot did not become idle")
	}
}

// see is expect with the deadline of these tests.
func see(h *harness, pattern string) []string {
	h.t.Helper()
	return expectSoon(h, replayWait, pattern)
}

// expectSoon is expect with a short deadline.
func expectSoon(h *harness, d time.Duration, pattern string) []string {
	h.t.Helper()
	return h.out.Expect(h.t, &h.cursor, d, pattern)
}
