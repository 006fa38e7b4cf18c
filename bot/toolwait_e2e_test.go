package bot

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/testkit"
)

// toolRecorder stands between the bot and the console and keeps every
// state a tool line was shown in, by message: what any platform would
// have rendered.
type toolRecorder struct {
	adapters.Adapter
	mu    sync.Mutex
	shown map[string][]adapters.Tool // by tool name and input
}

func (r *toolRecorder) Immediate() {}

func (r *toolRecorder) record(m adapters.Message) {
	if m.Kind != adapters.KindTool || m.Tool == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := m.Tool.Name + " " + m.Tool.Input
	r.shown[k] = append(r.shown[k], *m.Tool)
}

func (r *toolRecorder) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	r.record(m)
	return r.Adapter.Post(ctx, t, m)
}

func (r *toolRecorder) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	r.record(m)
	return r.Adapter.Edit(ctx, ref, m)
}

func (r *toolRecorder) states(key string) []adapters.Tool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]adapters.Tool(nil), r.shown[key]...)
}

// TestToolWaitsForApproval (real CLI): a Bash call that needs approval
// shows "waiting for approval" and no running time for as long as nobody
// decides (11 s pass on the bot's clock, and two of the view's refresh
// ticks, which the test hands it); allowed, it runs and ends;
// denied, its line says so and it never runs. The oracle is every state
// the tool line was shown in (what Slack and Matrix would render too), the
// console's lines, and the working directory.
func TestToolWaitsForApproval(t *testing.T) {
	rec := &toolRecorder{shown: map[string][]adapters.Tool{}}
	clk, ticks := testkit.RunningClock(), make(chan time.Time)
	h := newHarnessWrapped(t, script(nil), func(c *testConfig) {
		c.Now, c.ticks = clk.Now, ticks
	}, func(a adapters.Adapter) adapters.Adapter {
		rec.Adapter = a
		return rec
	})
	tests := []struct {
		name, file, reply string
		line              string // the console's last line for the tool
		end               adapters.ToolState
	}{
		{"allowed", "waited.txt", "allow", `^\[main\] ✓ Bash: touch waited\.txt \(`, adapters.ToolOK},
		{"denied", "refused.txt", "deny not now", `^\[main\] ⊘ Bash: touch refused\.txt \(.*\) → Denied by operator: not now$`, adapters.ToolDenied},
	}
	for _, tt := range tests {
		key := "Bash touch " + tt.file
		h.say("run touch " + tt.file)
		h.expect(`^\[main\] ⏸ Bash: touch ` + tt.file + ` — waiting for approval$`)
		h.expect(`^\[main\] \? approval \w+: Bash`)
		clk.Advance(11 * time.Second)
		h.tick(ticks, 2)
		states := rec.states(key)
		if n := len(states); n != 2 || states[0].State != adapters.ToolRunning || states[1].State != adapters.ToolWaiting || states[1].Elapsed != 0 {
			t.Fatalf("%s: before a decision the line was shown as %+v; want running (posted), then waiting with no time, and nothing since", tt.name, states)
		}
		h.absent(0, `Bash: touch `+tt.file+` \(`)

		h.say(tt.reply)
		h.expect(tt.line)
		h.expect(`— ✓`)
		states = rec.states(key)
		last := states[len(states)-1]
		if last.State != tt.end {
			t.Errorf("%s: the line ended as %v, want %v: %+v", tt.name, last.State, tt.end, states)
		}
		if tt.end == adapters.ToolOK && len(states) > 2 && (states[2].State != adapters.ToolRunning || states[2].Elapsed != 0) {
			t.Errorf("%s: shown as %+v next, want running from 0", tt.name, states[2])
		}
		_, err := os.Stat(filepath.Join(h.workdir, tt.file))
		if ran := err == nil; ran != (tt.end == adapters.ToolOK) {
			t.Errorf("%s: the command ran: %v, want %v", tt.name, ran, tt.end == adapters.ToolOK)
		}
	}
}
