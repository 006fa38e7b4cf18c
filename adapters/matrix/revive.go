package matrix

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// A tool's line is one line of a status event that shows a run of tool
// calls. Its ref names the event and the line's place, so that the next
// run of the bot can still end it (a restart shows the line of a request
// it expired as final): the event's latest content is read back from the
// homeserver and that one line replaced.

// toolRefID is a tool line's ref: "<event>|<line>", "|f" added when the
// tool's long input went up as a file.
func toolRefID(ev id.EventID, line int, file bool) string {
	s := ev.String() + "|" + strconv.Itoa(line)
	if file {
		s += "|f"
	}
	return s
}

// parseToolRefID reads a toolRefID back.
func parseToolRefID(s string) (ev id.EventID, line int, file bool, ok bool) {
	parts := strings.Split(s, "|")
	if len(parts) < 2 || len(parts) > 3 || !strings.HasPrefix(parts[0], "$") {
		return "", 0, false, false
	}
	line, err := strconv.Atoi(parts[1])
	if err != nil || line < 0 {
		return "", 0, false, false
	}
	return id.EventID(parts[0]), line, len(parts) == 3 && parts[2] == "f", true
}

// reviveTool edits a tool line this run did not post: its status event's
// latest content is read, and its line replaced.
func (a *Adapter) reviveTool(ctx context.Context, ref adapters.MessageRef, tool *adapters.Tool) error {
	evID, line, file, ok := parseToolRefID(ref.ID)
	if !ok {
		return fmt.Errorf("matrix: unknown tool line %s", ref.ID)
	}
	room := id.RoomID(ref.Thread.Channel)
	evt, err := a.cli.GetEvent(ctx, room, evID)
	if err != nil {
		return fmt.Errorf("matrix: read the status event of tool line %s: %w", ref.ID, err)
	}
	evt.RoomID = room
	evt, ok = a.readable(ctx, evt)
	if !ok || evt.Type != event.EventMessage {
		return fmt.Errorf("matrix: status event of tool line %s cannot be read", ref.ID)
	}
	c := a.latestEdit(ctx, evt)
	if c == nil {
		c = evt.Content.AsMessage()
	}
	lines := statusLines(c.Body)
	if line >= len(lines) {
		return fmt.Errorf("matrix: status event of tool line %s has %d lines", ref.ID, len(lines))
	}
	lines[line] = toolLine(tool, file)
	a.setEdit(room, ref.Thread.Key(), evID, content(strings.Join(lines, "\n")), true)
	return a.ed.Flush(ctx, evID.String())
}

// toolMarks begin a tool's line (toolLine), after its depth's indent.
var toolMarks = []string{"⚙️", "⏸️", "✓", "✗", "⊘"}

// statusLines cuts a status event's body back into the tool lines it
// joined: a line begins where a mark and a name in bold begin a line
// outside a code block (an input's code block may hold anything, but its
// fence is longer than any run of backticks in it).
func statusLines(body string) []string {
	var out []string
	fence := ""
	for _, l := range strings.Split(body, "\n") {
		starts := fence == "" && startsToolLine(l)
		switch {
		case fence != "" && l == fence:
			fence = ""
		case fence == "" && len(l) >= 3 && strings.Trim(l, "`") == "":
			fence = l
		}
		if starts || len(out) == 0 {
			out = append(out, l)
			continue
		}
		out[len(out)-1] += "\n" + l
	}
	return out
}

func startsToolLine(l string) bool {
	l = strings.TrimLeft(l, " ")
	for _, m := range toolMarks {
		if strings.HasPrefix(l, m+" **") {
			return true
		}
	}
	return false
}
