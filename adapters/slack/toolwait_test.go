package slack

import (
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

// TestToolLineWaiting: a tool waiting for a decision says what it waits
// for and shows no running time; its edits are paced like a running
// tool's (only an ended tool's line is urgent), and its output is not
// uploaded (it has none yet).
func TestToolLineWaiting(t *testing.T) {
	tests := []struct {
		tool   adapters.Tool
		want   string
		urgent bool
	}{
		{adapters.Tool{Name: "Bash", Input: "touch a.txt", State: adapters.ToolWaiting, Preview: "stale"},
			"⏸ *Bash* `touch a.txt` — waiting for approval", false},
		{adapters.Tool{Name: "AskUserQuestion", Input: "asks you", State: adapters.ToolWaiting},
			"⏸ *AskUserQuestion* `asks you` — waiting for an answer", false},
		{adapters.Tool{Name: "Bash", Input: "touch a.txt", State: adapters.ToolRunning, Elapsed: 5e9},
			"⚙ *Bash* `touch a.txt` · 5s", false},
		{adapters.Tool{Name: "Bash", Input: "touch a.txt", State: adapters.ToolDenied, Elapsed: 5e9, Preview: "Denied by operator"},
			"⊘ *Bash* `touch a.txt` · 5s — Denied by operator", true},
	}
	for _, tt := range tests {
		if got := toolLine(&tt.tool); got != tt.want {
			t.Errorf("toolLine(%v) = %q, want %q", tt.tool.State, got, tt.want)
		}
		m := adapters.Message{Kind: adapters.KindTool, Tool: &tt.tool}
		if got := urgent(m); got != tt.urgent {
			t.Errorf("urgent(%v) = %v, want %v", tt.tool.State, got, tt.urgent)
		}
		if strings.Contains(toolLine(&tt.tool), "stale") {
			t.Errorf("a waiting tool shows a preview: %q", toolLine(&tt.tool))
		}
	}
}
