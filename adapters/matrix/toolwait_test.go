package matrix

import (
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

// TestToolLineWaiting: a tool waiting for a decision says what it waits
// for, with no running time and no output (not even a file of it).
func TestToolLineWaiting(t *testing.T) {
	tests := []struct {
		tool adapters.Tool
		want string
	}{
		{adapters.Tool{Name: "Bash", Input: "touch a.txt", State: adapters.ToolWaiting, Preview: "stale"},
			"⏸️ **Bash** `touch a.txt` — waiting for approval"},
		{adapters.Tool{Name: "AskUserQuestion", Input: "asks you", State: adapters.ToolWaiting},
			"⏸️ **AskUserQuestion** `asks you` — waiting for an answer"},
		{adapters.Tool{Name: "Bash", Input: "touch a.txt", State: adapters.ToolDenied, Elapsed: 5e9, Preview: "Denied by operator"},
			"⊘ **Bash** `touch a.txt` · 5s — Denied by operator"},
	}
	for _, tt := range tests {
		if got := toolLine(&tt.tool, false); got != tt.want {
			t.Errorf("toolLine(%v) = %q, want %q", tt.tool.State, got, tt.want)
		}
	}
	waiting := adapters.Tool{Name: "Bash", State: adapters.ToolWaiting, Output: strings.Repeat("x", fileOutputRunes+1)}
	if longOutput(&waiting) {
		t.Error("a waiting tool's output would be uploaded")
	}
}
