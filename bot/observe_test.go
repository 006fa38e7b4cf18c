package bot

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// countingObserver counts what the bot tells its Observer: "start new",
// "start resume", "start failed", "crash", "resume lost", "turn <result>",
// "first text", "approval <kind> <outcome>"; tokens and cost by
// "platform/channel".
type countingObserver struct {
	mu     sync.Mutex
	n      map[string]int
	tokens map[string]int64
	cost   map[string]float64
	took   []time.Duration
}

func newCountingObserver() *countingObserver {
	return &countingObserver{n: map[string]int{}, tokens: map[string]int64{}, cost: map[string]float64{}}
}

func (o *countingObserver) add(k string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[k]++
}

func (o *countingObserver) ProcessStarted(resumed bool) {
	if resumed {
		o.add("start resume")
	} else {
		o.add("start new")
	}
}
func (o *countingObserver) ProcessStartFailed() { o.add("start failed") }
func (o *countingObserver) ProcessCrashed()     { o.add("crash") }
func (o *countingObserver) ResumeLost()         { o.add("resume lost") }
func (o *countingObserver) TurnEnded(result string, took time.Duration) {
	o.add("turn " + result)
	o.mu.Lock()
	o.took = append(o.took, took)
	o.mu.Unlock()
}
func (o *countingObserver) FirstText(wait time.Duration) {
	if wait < 0 {
		o.add("negative wait")
	}
	o.add("first text")
}
func (o *countingObserver) ApprovalSettled(kind, outcome string) {
	o.add("approval " + kind + " " + outcome)
}
func (o *countingObserver) Spent(t adapters.ThreadRef, u Usage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := t.Platform + "/" + t.Channel
	o.tokens[k] += u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheCreationTokens
	o.cost[k] += u.CostUSD
}

func (o *countingObserver) counts() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

func checkCounts(t *testing.T, o *countingObserver, want map[string]int) {
	t.Helper()
	if got := o.counts(); !maps.Equal(got, want) {
		t.Errorf("observed %v\n    want %v", got, want)
	}
}

// TestObserverCrashThenResume: a process that dies mid-turn is one crash
// and one aborted turn; the next message resumes (a start of kind
// resume) and is answered (a successful turn, its first text timed).
func TestObserverCrashThenResume(t *testing.T) {
	steps := loadTranscript(t, "text")
	cli := newFakeCLI(t, func(n int, o claudeproc.Options) (*fakeProc, error) {
		p := newFakeProc(context.Background(), o, slices.Clone(steps))
		if n == 0 {
			p.crashAt = 6 // two text deltas out, the third not yet
		}
		return p, nil
	})
	obs := newCountingObserver()
	h := newReplayHarness(t, cli, func(c *testConfig) { c.Observer = obs })
	h.say("hello")
	see(h, `^\[main\] — ✗ Turn ended: Claude Code stopped$`)
	waitBotIdle(t, h.b)
	checkCounts(t, obs, map[string]int{"start new": 1, "crash": 1, "turn aborted": 1, "first text": 1})

	h.say("are you back?")
	see(h, `^\[main\] — ✓ `)
	waitBotIdle(t, h.b)
	checkCounts(t, obs, map[string]int{"start new": 1, "start resume": 1, "crash": 1, "turn aborted": 1, "turn success": 1, "first text": 2})
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, d := range obs.took {
		if d <= 0 {
			t.Errorf("a turn the bot ran was told without its duration: %v", obs.took)
		}
	}
	if obs.tokens["console/console"] == 0 {
		t.Errorf("no tokens told for the console's channel: %v", obs.tokens)
	}
}

// TestObserverResumeLost: a stored session that cannot be resumed is told
// as such, not as a crash, and the fresh session's turn is one turn.
func TestObserverResumeLost(t *testing.T) {
	unknown := loadTranscript(t, "resume-unknown")
	text := loadTranscript(t, "text")
	cli := newFakeCLI(t, func(n int, o claudeproc.Options) (*fakeProc, error) {
		if o.Resume != "" {
			p := newFakeProc(context.Background(), o, slices.Clone(unknown))
			p.endExit = &claudeproc.ExitInfo{Code: 1, Reason: "exited with code 1",
				StderrTail: "No conversation found with session ID: " + o.Resume + "\n"}
			return p, nil
		}
		return newFakeProc(context.Background(), o, slices.Clone(text)), nil
	})
	obs := newCountingObserver()
	h := newReplayHarness(t, cli, func(c *testConfig) { c.Observer = obs })
	now := time.Now()
	if err := h.st.SaveThread(context.Background(), store.Thread{
		Key: replayThread, Platform: "console", Channel: "console", ThreadID: "main",
		StartedBy: console.OperatorID, SessionID: "00000000-0000-4000-8000-000000000000", State: "idle", CreatedAt: now, LastActivity: now,
	}); err != nil {
		t.Fatal(err)
	}
	h.say("what did we say yesterday?")
	see(h, `^\[main\] — ✓ `)
	waitBotIdle(t, h.b)
	checkCounts(t, obs, map[string]int{"start resume": 1, "resume lost": 1, "start new": 1, "turn success": 1, "first text": 1})
}

// TestObserverApprovals: a prompt decided by a person, and one nobody
// decided, are each told once with their outcome.
func TestObserverApprovals(t *testing.T) {
	tests := []struct {
		transcript string
		decide     func(h *harness, id string)
		want       string
	}{
		{"bash-approval-allow", func(h *harness, id string) { h.say("allow") }, "approval tool allowed"},
		{"bash-approval-deny", func(h *harness, id string) { h.say("deny not now") }, "approval tool denied"},
		{"bash-approval-deny", func(h *harness, id string) {
			expectSoon(h, 10*time.Second, `^\[main\] ! approval `+id+`: Expired`)
		}, "approval tool expired"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			cli := newFakeCLI(t, replaying(t, tt.transcript))
			obs := newCountingObserver()
			h := newReplayHarness(t, cli, func(c *testConfig) {
				c.Observer = obs
				if strings.HasSuffix(tt.want, "expired") {
					c.ApprovalTimeout = time.Second
				}
			})
			h.say("create a file")
			id := see(h, `^\[main\] \? approval (\w+): Bash wants to run`)[1]
			tt.decide(h, id)
			see(h, `^\[main\] — ✓ `)
			waitBotIdle(t, h.b)
			if got := obs.counts()[tt.want]; got != 1 {
				t.Errorf("%q told %d times; all: %v", tt.want, got, obs.counts())
			}
			for k, n := range obs.counts() {
				if strings.HasPrefix(k, "approval ") && k != tt.want {
					t.Errorf("also told %q (%d)", k, n)
				}
			}
		})
	}
}

// TestObserverRecoverTellsOnce: what a dead run left — a turn never
// finished, an approval never decided — is told by the start that closes
// it, as interrupted and expired, and by no later start.
func TestObserverRecoverTellsOnce(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	if _, err := st.StartTurn(ctx, store.Turn{ThreadKey: replayThread, ChannelKey: "console/console", SessionID: "s", Prompt: "cut off", StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveApproval(ctx, store.Approval{ID: "ap1", RequestID: "r1", ThreadKey: replayThread, ChannelKey: "console/console",
		Tool: "Bash", Input: `{"command":"touch x"}`, Kind: "tool", State: "pending", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []map[string]int{
		{"turn interrupted": 1, "approval tool expired": 1},
		{}, // the next start finds them closed
	} {
		obs := newCountingObserver()
		b := New(Config{Observer: obs, Workdir: t.TempDir()}, st)
		if err := b.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if got := obs.counts(); !maps.Equal(got, want) {
			t.Errorf("start %d told %v, want %v", i+1, got, want)
		}
		if obs.took != nil && obs.took[0] != 0 {
			t.Errorf("an interrupted turn told with a duration: %v", obs.took)
		}
	}
}
