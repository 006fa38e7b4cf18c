package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestConsoleOversizedApprovalDenied: the model writes a file of 100 KiB
// while the bot reads Claude Code's lines up to the lowest cap it takes
// (64 KiB): the CLI's can_use_tool line is over it. The request is denied
// at once, saying why (the model reads it as the tool's result), the
// thread is told so, and the turn goes on and ends — not at the turn
// limit. (Its result line carries the denied input in permission_denials,
// over the cap too: it is read with its long strings cut, shorten.go.)
func TestConsoleOversizedApprovalDenied(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", (100<<10)/16)
	model := func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("tool result: " + trs[0].Content)}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Write", map[string]string{"file_path": "big.txt", "content": big})}}
	}
	h := newHarness(t, model, func(c *testConfig) { c.MaxLineBytes = 64 << 10 })
	start := time.Now()
	h.say("write a big file")
	h.expect(`^\[main\] \* Claude Code asked to use Write with a request of \d+ bytes, over the limit of 65536 bytes .*: denied without being shown \(too large to show\)\.`)
	h.expect(`claude: tool result: .*too large to show`)
	h.expect(`^\[main\] — ✓`)
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("the turn took %s", d)
	}
	h.absent(0, `\? approval`)
}
