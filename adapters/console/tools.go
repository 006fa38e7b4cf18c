package console

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
)

// toolTick is the least time between two prints of a running tool's line.
const toolTick = 10 * time.Second

// shownTool is how a tool's line was last printed.
type shownTool struct {
	at    time.Time
	state adapters.ToolState
}

// renderTool prints a tool's line: when it starts, once when it waits for
// a decision ("waiting for approval", no time: it is not running), at most
// every 10 s while it runs, and when it ends. The first print shows every
// line of its input; later ones its first line.
func (a *Adapter) renderTool(ref adapters.MessageRef, t *adapters.Tool) {
	th := ref.Thread.Thread
	indent := strings.Repeat("  ", t.Depth)
	last, seen := a.tools[ref.ID]
	now := a.now()
	var s string
	switch {
	case t.State == adapters.ToolWaiting:
		if seen && last.state == adapters.ToolWaiting {
			return
		}
		s = indent + "⏸ " + toolLabel(t, seen) + " — " + t.WaitingText()
		a.tools[ref.ID] = shownTool{at: now, state: t.State}
	case !t.State.Done():
		if seen && last.state == adapters.ToolWaiting {
			// Allowed: the prompt's outcome says so. Its running time
			// shows from the next tick on.
			a.tools[ref.ID] = shownTool{at: now, state: t.State}
			return
		}
		if seen && now.Sub(last.at) < toolTick {
			return
		}
		s = indent + "⚙ " + toolLabel(t, seen)
		if seen {
			s += " (" + adapters.FormatDuration(t.Elapsed) + ")"
		}
		a.tools[ref.ID] = shownTool{at: now, state: t.State}
	default:
		mark := map[adapters.ToolState]string{adapters.ToolOK: "✓", adapters.ToolFailed: "✗", adapters.ToolDenied: "⊘"}[t.State]
		s = fmt.Sprintf("%s%s %s (%s)", indent, mark, toolLabel(t, seen), adapters.FormatDuration(t.Elapsed))
		if t.Preview != "" {
			s += " → " + oneLine(t.Preview, 160)
		}
		delete(a.tools, ref.ID)
	}
	a.printf(th, "%s", s)
	if !seen {
		for _, l := range inputRest(t.Input) {
			a.printf(th, "%s    │ %s", indent, l)
		}
	}
}

// toolLabel is "Bash: make test", or just the name when there is no
// input; the first line of a longer input, with " …" when its other lines
// were shown before (again: they follow).
func toolLabel(t *adapters.Tool, again bool) string {
	if t.Input == "" {
		return t.Name
	}
	first := lines(t.Input)[0]
	if again && inputRest(t.Input) != nil {
		first += " …"
	}
	return t.Name + ": " + first
}

// inputRest is the lines of a tool's input after its first.
func inputRest(in string) []string {
	l := lines(strings.TrimRight(in, "\r\n"))
	if len(l) < 2 {
		return nil
	}
	return l[1:]
}

// oneLine is the first line of s, cut to at most n bytes on a rune
// boundary (an invalid byte is kept: put shows it as an escape).
func oneLine(s string, n int) string {
	if l := lines(strings.TrimSpace(s)); len(l) > 1 {
		s = l[0] + " …"
	} else {
		s = l[0]
	}
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
