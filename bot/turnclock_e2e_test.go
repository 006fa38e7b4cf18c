package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/store"
)

// turnLimit is the turn timeout of these tests. The turn clock runs on a
// clock the test moves (testkit.Clock): a turn's time is up when the test
// says, never because a loaded machine was slow. On the wall clock, a
// CLI that took longer than the limit to ask the model was interrupted
// before it asked, and the test waited for a request that never came.
const turnLimit = 5 * time.Second

// turnClock gives the bot and its turn clock a clock that stands still
// but when the test moves it: a turn's time is what the test adds, not the
// seconds a loaded machine takes to start claude and ask the model.
func turnClock(c *testConfig) *testkit.Clock {
	clk := testkit.NewClock(time.Now())
	c.Now, c.Limits.Timers = clk.Now, clk
	c.Limits.TurnTimeout = turnLimit
	return clk
}

// deafProcess is a claude process that acknowledges interrupts and never
// passes them on: a turn that will not end when asked.
type deafProcess struct{ process }

func (deafProcess) Interrupt(context.Context, bool) (claudeproc.InterruptResult, error) {
	return claudeproc.InterruptResult{}, nil
}

// claudePids are the processes whose environment holds HOME=home: the
// claude processes of one harness (/proc, not the bot's own account).
func claudePids(home string) []string {
	var pids []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if kv == "HOME="+home {
				pids = append(pids, filepath.Base(filepath.Dir(f)))
				break
			}
		}
	}
	return pids
}

// A hung turn is stopped at CLAUDEOPS_TURN_TIMEOUT: the thread is told why,
// the slot goes to the thread waiting for it (one slot in all), and the
// stopped thread's next message works. A process that does not end the
// turn when interrupted is closed after the stop grace.
func TestConsoleTurnTimeout(t *testing.T) {
	tests := []struct {
		name string
		deaf bool // the process ignores the interrupt
		// footer is how the stopped turn ends in the thread.
		footer string
	}{
		{"the CLI ends the turn when interrupted", false, `^\[main\] — ■ Stopped · `},
		// Closed, the CLI may still print the aborted turn's result.
		{"a process deaf to the interrupt is closed", true, `^\[main\] — (■ Stopped · |✗ Turn ended: the turn ran longer than 5s \(CLAUDEOPS_TURN_TIMEOUT\)$)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hold := make(chan struct{}) // never released: the first turn hangs
			var clk *testkit.Clock
			h := newHarness(t, script(hold), func(c *testConfig) {
				c.MaxSessions = 1
				clk = turnClock(c)
			})
			if tt.deaf {
				h.stopBot()
				h.wrapStart = func(s starter) starter {
					return func(ctx context.Context, o claudeproc.Options) (process, error) {
						p, err := s(ctx, o)
						if err != nil {
							return nil, err
						}
						return deafProcess{p}, nil
					}
				}
				h.startBot()
			}

			h.say("slow and hung")
			h.api.WaitRequests(1, waitTimeout)
			pids := claudePids(h.home)
			h.say("/thread other")
			h.say("hello from other")
			start := h.cursor // the two threads' lines come in either order
			h.expect(`^\[other\] \* All 1 Claude sessions are busy; this thread is waiting \(position 1`)
			// The one timer is main's turn clock: its time runs out.
			if d := clk.WaitTimers(t, 1)[0]; d != turnLimit {
				t.Errorf("the turn clock is set %s ahead, want the limit %s", d, turnLimit)
			}
			clk.Advance(turnLimit)
			h.cursor = start
			h.expect(`^\[main\] \* Stopped: the turn ran longer than 5s \(CLAUDEOPS_TURN_TIMEOUT\)\.$`)
			if tt.deaf {
				// The stop grace, set at the interrupt, runs out too.
				clk.WaitTimers(t, 1)
				clk.Advance(h.b.cfg.StopGrace)
			}
			h.expect(tt.footer)
			h.cursor = start
			h.expect(`^\[other\] claude: ok: .*hello from other$`)
			if tt.deaf {
				// The deaf process was closed: its pid is gone.
				for _, pid := range pids {
					if _, err := os.Stat("/proc/" + pid); err == nil {
						if b, _ := os.ReadFile("/proc/" + pid + "/environ"); strings.Contains(string(b), "HOME="+h.home) {
							t.Errorf("claude %s still runs after its turn was stopped", pid)
						}
					}
				}
			}
			h.say("/thread main")
			h.say("next please")
			h.expect(`^\[main\] claude: ok: .*next please$`)
			if n := h.b.LiveSessions(); n > 1 {
				t.Errorf("%d live sessions, the cap is 1", n)
			}
			// The store: the stopped turn ended as an error, the next ran.
			turns := threadTurns(t, h, "console/console/main")
			if len(turns) != 2 || !turns[0].IsError || turns[1].IsError {
				t.Errorf("turns of main: %+v", turns)
			}
		})
	}
}

// threadTurns reads a thread's turns from the store, oldest first.
func threadTurns(t *testing.T, h *harness, key string) []store.Turn {
	t.Helper()
	turns, err := h.st.ThreadTurns(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return turns
}

// While a prompt waits for a person the turn's clock stands still: a turn
// parked on an approval for longer than the turn timeout is not stopped;
// the approval is decided, or expires at its own timeout, and the turn
// goes on to its end.
func TestConsoleTurnTimeoutWaitsForApprovals(t *testing.T) {
	tests := []struct {
		name     string
		approval time.Duration
		wait     time.Duration // passes while the prompt waits
		decide   bool
		outcome  string // the prompt's last line
		file     bool   // the command ran
	}{
		{"decided after the turn timeout", time.Hour, 2 * turnLimit, true, `Allowed by operator$`, true},
		{"expiring after the turn timeout", 3 * turnLimit, 3 * turnLimit, false, `Expired: nobody decided in time\.$`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var clk *testkit.Clock
			h := newHarness(t, script(nil), func(c *testConfig) {
				clk = turnClock(c)
				c.ApprovalTimeout = tt.approval
			})
			from := h.cursor
			h.say("run touch waited.txt")
			id := h.expect(`^\[main\] \? approval (\w+): Bash`)[1]
			// The turn clock stands still while the prompt waits: no
			// timer is left to fire, however long the wait.
			clk.WaitTimers(t, 0)
			clk.Advance(tt.wait)
			if tt.decide {
				h.say("allow")
			}
			h.expect(`^\[main\] ! approval ` + id + `: ` + tt.outcome)
			h.expect(`^\[main\] claude: tool result: `)
			h.expect(`^\[main\] — ✓ `)
			h.absent(from, `Stopped|Turn ended`)
			_, err := os.Stat(filepath.Join(h.workdir, "waited.txt"))
			if ran := err == nil; ran != tt.file {
				t.Errorf("the command ran: %v, want %v", ran, tt.file)
			}
			turns := threadTurns(t, h, "console/console/main")
			if len(turns) != 1 || turns[0].IsError || turns[0].ResultSubtype != "success" {
				t.Errorf("the turn: %+v", turns)
			}
		})
	}
}
