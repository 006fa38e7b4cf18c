package claudeproc

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/claudeops/claudeops/internal/testkit"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = testkit.Update

const fixtureDir = "testdata/cli-2.1.330"

// describe renders an event as one stable line for golden files: the fields a
// consumer relies on, not the whole payload.
func describe(ev Event) string {
	short := func(s string, n int) string {
		s = strings.ReplaceAll(s, "\n", `\n`)
		if len(s) > n {
			return s[:n] + "…"
		}
		return s
	}
	sub := func(m Meta) string {
		if m.ParentToolUseID == "" && m.AgentID == "" {
			return ""
		}
		return fmt.Sprintf(" parent=%s agent=%s", m.ParentToolUseID, m.AgentID)
	}
	switch e := ev.(type) {
	case *SystemInit:
		return fmt.Sprintf("system/init model=%s mode=%s version=%s tools=%d%s", e.Model, e.PermissionMode, e.ClaudeCodeVersion, len(e.Tools), sub(e.Meta))
	case *SystemStatus:
		if e.CompactResult != "" {
			return fmt.Sprintf("system/status %s compact_result=%s", e.Status, e.CompactResult)
		}
		return fmt.Sprintf("system/status %s", e.Status)
	case *CompactBoundary:
		return fmt.Sprintf("system/compact_boundary trigger=%s pre_tokens=%d post_tokens=%d", e.Trigger, e.PreTokens, e.PostTokens)
	case *APIRetry:
		return fmt.Sprintf("system/api_retry attempt=%d/%d status=%d error=%s", e.Attempt, e.MaxRetries, e.ErrorStatus, e.Error)
	case *TaskEvent:
		return fmt.Sprintf("%s task=%s tool_use=%s type=%s status=%s%s", e.Kind(), e.TaskID, e.ToolUseID, e.TaskType, e.Status, sub(e.Meta))
	case *Informational:
		return fmt.Sprintf("system/informational level=%s tag=%s", e.Level, e.Tag)
	case *PermissionDenied:
		return fmt.Sprintf("system/permission_denied tool=%s reason=%s", e.ToolName, e.DecisionReasonType)
	case *Assistant:
		var b strings.Builder
		for _, bl := range e.Blocks {
			switch bl.Type {
			case "text":
				fmt.Fprintf(&b, " text=%q", short(bl.Text, 60))
			case "thinking":
				fmt.Fprintf(&b, " thinking=%q", short(bl.Thinking, 40))
			case "tool_use":
				fmt.Fprintf(&b, " tool_use=%s(%s)", bl.Name, short(string(bl.Input), 60))
			default:
				fmt.Fprintf(&b, " %s", bl.Type)
			}
		}
		if e.IsAPIError {
			fmt.Fprintf(&b, " api_error=%s", e.Error)
		}
		return "assistant" + b.String() + sub(e.Meta)
	case *User:
		var b strings.Builder
		for _, r := range e.ToolResults {
			fmt.Fprintf(&b, " tool_result(error=%v len=%d)=%q", r.IsError, len(r.Content), short(string(r.Content), 50))
		}
		if e.Text != "" {
			fmt.Fprintf(&b, " text=%q", short(e.Text, 60))
		}
		if e.IsReplay {
			b.WriteString(" replay")
		}
		return "user" + b.String() + sub(e.Meta)
	case *StreamEvent:
		s := "stream_event " + e.EventType
		if e.Delta != "" {
			s += fmt.Sprintf(" %s=%q", e.DeltaType, short(e.Delta, 40))
		}
		if e.Block != nil && e.EventType == "content_block_stop" {
			switch e.Block.Type {
			case "text":
				s += fmt.Sprintf(" block=text(%d chars)", len(e.Block.Text))
			case "thinking":
				s += fmt.Sprintf(" block=thinking(%d chars)", len(e.Block.Thinking))
			case "tool_use":
				s += fmt.Sprintf(" block=tool_use %s %s", e.Block.Name, short(string(e.Block.Input), 60))
			}
		}
		if e.StopReason != "" {
			s += " stop=" + e.StopReason
		}
		return s + sub(e.Meta)
	case *ControlRequest:
		if c := e.CanUseTool; c != nil {
			return fmt.Sprintf("control_request can_use_tool tool=%s input=%s suggestions=%d interaction=%v agent=%s", c.ToolName, short(string(c.Input), 60), len(c.PermissionSuggestions), c.RequiresUserInteraction, c.AgentID)
		}
		return "control_request " + e.Subtype
	case *ControlCancelRequest:
		return "control_cancel_request"
	case *ControlResponse:
		return fmt.Sprintf("control_response %s id=%s error=%q code=%s", e.Subtype, e.RequestID, short(e.Error, 40), e.ErrorCode)
	case *CommandLifecycle:
		return "command_lifecycle " + e.State
	case *Result:
		s := fmt.Sprintf("result %s is_error=%v terminal=%s turns=%d denials=%d api_status=%d result=%q", e.Subtype, e.IsError, e.TerminalReason, e.NumTurns, len(e.PermissionDenials), e.APIErrorStatus, short(e.Result, 50))
		if e.LocalCommand != "" {
			s += " local_command=" + e.LocalCommand
		}
		return s
	case *Unknown:
		return fmt.Sprintf("unknown %s/%s", e.Type, e.Subtype)
	case *ParseError:
		return fmt.Sprintf("parse_error %v", e.Err)
	case *Truncated:
		return fmt.Sprintf("truncated type=%s size=%d", e.Type, e.OriginalSize)
	}
	return ev.Kind()
}

func readAll(t testing.TB, r io.Reader, max int) []Event {
	t.Helper()
	rd := NewReader(r, max, nil)
	var out []Event
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out = append(out, ev)
	}
}

// TestContractFixtures parses every transcript the real CLI 2.1.330 printed
// and compares the typed events with golden descriptions. No line of a real
// transcript may be unknown or malformed.
func TestContractFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.ndjson"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".ndjson")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			events := readAll(t, bytes.NewReader(data), 0)
			if want := bytes.Count(data, []byte("\n")); len(events) != want {
				t.Errorf("got %d events for %d lines", len(events), want)
			}
			var got strings.Builder
			for i, ev := range events {
				switch ev.(type) {
				case *Unknown, *ParseError, *Truncated:
					t.Errorf("line %d: %s", i+1, describe(ev))
				}
				got.WriteString(describe(ev))
				got.WriteByte('\n')
			}
			golden := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run with -update to create): %v", err)
			}
			if got.String() != string(want) {
				t.Errorf("events differ from %s (run with -update after checking):\n%s", golden, lineDiff(string(want), got.String()))
			}
		})
	}
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, a, c)
		}
	}
	return b.String()
}
