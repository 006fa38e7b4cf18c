package matrix

import (
	"slices"
	"strings"
	"testing"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// TestStatusLinesReadBack: a status event's body, as toolLine renders and
// postTool joins its lines, is cut back into the same lines, whatever an
// input's code block holds (a line that looks like a tool's, backticks).
func TestStatusLinesReadBack(t *testing.T) {
	tools := []struct {
		tool adapters.Tool
		file bool
	}{
		{adapters.Tool{Name: "Read", Input: "/etc/hosts", State: adapters.ToolOK, Elapsed: 2e9, Preview: "done"}, false},
		{adapters.Tool{Name: "Bash", Input: "echo a\n✓ **Fake** `x`\n```\n⊘ **Also** fake", State: adapters.ToolRunning, Elapsed: 5e9}, false},
		{adapters.Tool{Name: "Bash", Input: "touch never.txt", State: adapters.ToolWaiting}, false},
		{adapters.Tool{Name: "Grep", Input: "x", State: adapters.ToolFailed, Depth: 1, Preview: "no match"}, false},
		{adapters.Tool{Name: "Bash", Input: strings.Repeat("y", 4000) + "\nz", State: adapters.ToolWaiting, Depth: 1}, true},
		{adapters.Tool{Name: "AskUserQuestion", Input: "asks you", State: adapters.ToolWaiting}, false},
	}
	var lines []string
	for _, tt := range tools {
		lines = append(lines, toolLine(&tt.tool, tt.file))
	}
	body := content(strings.Join(lines, "\n")).Body
	if got := statusLines(body); !slices.Equal(got, lines) {
		t.Errorf("statusLines gave %d lines:\n%q\nwant %d:\n%q", len(got), got, len(lines), lines)
	}
}

// TestToolRefIDReadBack: a tool line's ref names its event and place, and
// reads back; what is not one is refused.
func TestToolRefIDReadBack(t *testing.T) {
	for _, tt := range []struct {
		ev   id.EventID
		line int
		file bool
	}{{"$abc:example.org", 0, false}, {"$Zm9v-YmFy_", 7, true}} {
		ev, line, file, ok := parseToolRefID(toolRefID(tt.ev, tt.line, tt.file))
		if !ok || ev != tt.ev || line != tt.line || file != tt.file {
			t.Errorf("read back %v %d %v %v, want %v %d %v", ev, line, file, ok, tt.ev, tt.line, tt.file)
		}
	}
	for _, bad := range []string{"tool-3", "$ev", "$ev|x", "$ev|-1", "$ev|1|f|g", "ev|1"} {
		if _, _, _, ok := parseToolRefID(bad); ok {
			t.Errorf("parseToolRefID(%q) accepted", bad)
		}
	}
}
