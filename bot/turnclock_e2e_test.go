package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// turnLimit is the turn timeout of these tests: short, yet far above what
// a plain turn takes on a loaded machine (the turns that must finish under
// it are one short model request each).
const turnLimit = 5 * time.Second

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
			h := newHarness(t, script(hold), func(c *testConfig) {
				c.MaxSessions = 1
				c.Limits.TurnTimeout = turnLimit
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
			h.cursor = start
			h.expect(`^\[main\] \* Stopped: the turn ran longer than 5s \(CLAUDEOPS_TURN_TIMEOUT\)\.$`)
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
		decide   bool
		outcome  string // the prompt's last line
		file     bool   // the command ran
	}{
		{"decided after the turn timeout", time.Hour, true, `Allowed by operator$`, true},
		{"expiring after the turn timeout", 3 * turnLimit, false, `Expired: nobody decided in time\.$`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, script(nil), func(c *testConfig) {
				c.Limits.TurnTimeout = turnLimit
				c.ApprovalTimeout = tt.approval
			})
			from := h.cursor
			h.say("run touch waited.txt")
			id := h.expect(`^\[main\] \? approval (\w+): Bash`)[1]
			if tt.decide {
				// Twice the turn timeout, waiting for a person.
				time.Sleep(2 * turnLimit)
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
