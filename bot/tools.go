package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/claudeproc"
)

// The view's tool lines, retry notices and footers.

type toolLine struct {
	id      string
	tool    adapters.Tool
	ref     *adapters.MessageRef
	started time.Time
	shownAt time.Time
	done    bool
	// stored is the platform ref under which the line is recorded as
	// running (restartlines.go), "" while it is not.
	stored string
}

// keyInput picks what a tool line shows of its input.
func keyInput(tool string, raw json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(raw, &in)
	str := func(k string) string {
		s, _ := in[k].(string)
		return s
	}
	var s string
	switch tool {
	case "Bash":
		// Whole, every line: what runs is what people see (the adapter
		// uploads what does not fit its tool line).
		return str("command")
	case "Read", "Write", "Edit", "MultiEdit":
		s = str("file_path")
	case "NotebookEdit":
		s = str("notebook_path")
	case "Glob", "Grep":
		s = str("pattern")
		if p := str("path"); p != "" {
			s += " in " + p
		}
	case "WebFetch":
		s = str("url")
	case "WebSearch":
		s = str("query")
	case "Agent", "Task":
		s = str("description")
	case "AskUserQuestion":
		s = "asks you"
	default:
		for _, k := range []string{"command", "file_path", "path", "url", "query", "description", "prompt"} {
			if s = str(k); s != "" {
				break
			}
		}
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		// A name with a newline or escape is shown quoted, not cut.
		return strconv.Quote(s)
	}
	return text.Shorten(s, 1000)
}

// toolStart shows a tool call.
func (v *view) toolStart(ctx context.Context, id, name string, input json.RawMessage, depth int) {
	if id == "" || v.tools[id] != nil {
		return
	}
	v.toolInputs[id] = input
	tl := &toolLine{id: id, tool: adapters.Tool{Name: name, Input: keyInput(name, input), State: adapters.ToolRunning, Depth: depth}, started: v.now()}
	v.tools[id] = tl
	ref, err := v.ad.Post(ctx, v.ref, adapters.Message{Kind: adapters.KindTool, Tool: &tl.tool})
	if err != nil {
		v.log.Warn("post tool line", "err", err)
		return
	}
	tl.ref, tl.shownAt = &ref, v.now()
	v.startTicker()
}

// toolLineRef is where the line of the tool call id is, and its depth;
// ok is false when it has none (not shown, or ended).
func (v *view) toolLineRef(id string) (ref adapters.MessageRef, depth int, ok bool) {
	tl := v.tools[id]
	if tl == nil || tl.ref == nil {
		return adapters.MessageRef{}, 0, false
	}
	return *tl.ref, tl.tool.Depth, true
}

// toolInput is what the running tool call id asked.
func (v *view) toolInput(id string) json.RawMessage { return v.toolInputs[id] }

func (v *view) toolDone(ctx context.Context, id string, isErr bool, output string) {
	tl := v.tools[id]
	if tl == nil || tl.done {
		return
	}
	v.endTool(tl)
	if isErr {
		tl.tool.State = adapters.ToolFailed
	} else {
		tl.tool.State = adapters.ToolOK
	}
	tl.tool.Elapsed = v.now().Sub(tl.started)
	if (tl.tool.Name == "Agent" || tl.tool.Name == "Task") && strings.Contains(output, "agent launched") {
		// The CLI's launch receipt is meant for the model, not for people.
		output = "running in the background"
	}
	tl.tool.Preview = text.Shorten(strings.TrimSpace(output), 300)
	tl.tool.Output = output
	v.showTool(ctx, tl)
	delete(v.tools, id)
}

// endTool marks a tool line finished; the caller sets how.
func (v *view) endTool(tl *toolLine) {
	tl.done = true
	delete(v.toolInputs, tl.id)
	v.unstore(tl)
}

// unstore marks the line as no longer running for its record: the worker
// forgets the record (restartlines.go).
func (v *view) unstore(tl *toolLine) {
	if tl.stored != "" {
		v.unstored = append(v.unstored, tl.stored)
		tl.stored = ""
	}
}

// closeTools ends the lines of tools that will not report any more
// (interrupted, or their process is gone). With mainOnly, a background
// subagent's tools (nested) are left running.
func (v *view) closeTools(ctx context.Context, mainOnly bool, why string) {
	now := v.now()
	for id, tl := range v.tools {
		if tl.done || (mainOnly && tl.tool.Depth > 0) {
			continue
		}
		v.endTool(tl)
		tl.tool.State = adapters.ToolFailed
		tl.tool.Elapsed = now.Sub(tl.started)
		tl.tool.Preview = why
		v.showTool(ctx, tl)
		delete(v.tools, id)
	}
}

// toolWaiting shows that the tool call id waits for a person (an approval
// or an answer): it has not started, so its line shows no running time
// until it is allowed (toolAllowed) or not (toolDenied).
func (v *view) toolWaiting(ctx context.Context, id string) {
	tl := v.tools[id]
	if tl == nil || tl.done || tl.tool.State == adapters.ToolWaiting {
		return
	}
	tl.tool.State, tl.tool.Elapsed = adapters.ToolWaiting, 0
	v.unstore(tl) // its request's record says where it is now
	v.showTool(ctx, tl)
}

// toolAllowed: a person allowed the waiting call id; it runs from now, and
// its time counts from now.
func (v *view) toolAllowed(ctx context.Context, id string) {
	tl := v.tools[id]
	if tl == nil || tl.done || tl.tool.State != adapters.ToolWaiting {
		return
	}
	tl.tool.State, tl.tool.Elapsed, tl.started = adapters.ToolRunning, 0, v.now()
	v.showTool(ctx, tl)
	v.startTicker()
}

func (v *view) toolDenied(ctx context.Context, id, why string) {
	tl := v.tools[id]
	if tl == nil || tl.done {
		return
	}
	v.endTool(tl)
	defer delete(v.tools, id)
	tl.tool.State = adapters.ToolDenied
	tl.tool.Elapsed = v.now().Sub(tl.started)
	tl.tool.Preview = text.Shorten(why, 300)
	v.showTool(ctx, tl)
}

func (v *view) showTool(ctx context.Context, tl *toolLine) {
	m := adapters.Message{Kind: adapters.KindTool, Tool: &tl.tool}
	if tl.ref == nil {
		ref, err := v.ad.Post(ctx, v.ref, m)
		if err == nil {
			tl.ref = &ref
		}
		return
	}
	if err := v.ad.Edit(ctx, *tl.ref, m); err != nil {
		v.log.Warn("edit tool line", "err", err)
	}
	tl.shownAt = v.now()
}

// tick refreshes the elapsed time of running tools (not of waiting ones).
func (v *view) tick(ctx context.Context) {
	if v.turn == nil && len(v.tools) == 0 {
		v.stopTicker()
		return
	}
	now := v.now()
	for _, tl := range v.tools {
		if tl.done || tl.ref == nil || tl.tool.State == adapters.ToolWaiting {
			continue // a waiting call has no running time to show
		}
		tl.tool.Elapsed = now.Sub(tl.started)
		v.showTool(ctx, tl)
	}
}

func (v *view) onRetry(ctx context.Context, e *claudeproc.APIRetry) {
	t := v.ensureTurn()
	what := e.Error
	if e.ErrorStatus != 0 {
		what = fmt.Sprintf("%d %s", e.ErrorStatus, e.Error)
	}
	text := fmt.Sprintf("Claude API error (%s); retrying, attempt %d of %d in %s.", what, e.Attempt, e.MaxRetries, e.RetryDelay().Round(100*time.Millisecond))
	m := adapters.Message{Kind: adapters.KindNotice, Text: text, Error: true}
	if t.retry == nil {
		ref, err := v.ad.Post(ctx, v.ref, m)
		if err == nil {
			t.retry = &ref
		}
		return
	}
	_ = v.ad.Edit(ctx, *t.retry, m)
}

// footer ends a turn's messages with what its result says: time, cost,
// turns, or the error.
func (v *view) footer(ctx context.Context, r *claudeproc.Result, cost float64) {
	dur := r.Duration()
	if dur == 0 && v.turn != nil {
		dur = v.now().Sub(v.turn.started)
	}
	text, isErr := footerText(r, dur, cost)
	v.postFooter(ctx, text, isErr)
}

func footerText(r *claudeproc.Result, dur time.Duration, cost float64) (string, bool) {
	stats := fmt.Sprintf("%s · $%.4f · %d %s", adapters.FormatDuration(dur), cost, r.NumTurns, text.Plural(r.NumTurns, "turn", "turns"))
	switch {
	case !r.IsError:
		return "✓ " + stats, false
	case r.TerminalReason == "aborted_streaming" || r.TerminalReason == "aborted_tools":
		return "■ Stopped · " + stats, false
	case r.TerminalReason == "api_error" || r.APIErrorStatus != 0:
		msg := r.Result
		if msg == "" {
			msg = "the model API failed"
		}
		if r.APIErrorStatus != 0 {
			return fmt.Sprintf("✗ API error %d: %s · %s", r.APIErrorStatus, msg, stats), true
		}
		return "✗ API error: " + msg + " · " + stats, true
	}
	msg := strings.Join(r.Errors, "; ")
	if msg == "" {
		msg = r.Result
	}
	if msg == "" {
		msg = r.Subtype
	}
	return "✗ Error: " + text.Shorten(msg, 300) + " · " + stats, true
}

func (v *view) postFooter(ctx context.Context, text string, isErr bool) {
	if _, err := v.ad.Post(ctx, v.ref, adapters.Message{Kind: adapters.KindFooter, Text: text, Error: isErr}); err != nil {
		v.log.Warn("post footer", "err", err)
	}
}

// endAbruptly ends a turn that got no result: why, when set, is said in
// its footer.
func (v *view) endAbruptly(ctx context.Context, why string) {
	if why != "" {
		v.postFooter(ctx, "✗ Turn ended: "+why, true)
	}
	v.turn = nil
	v.tag.set(0)
	v.setStatus("")
	v.stopTicker()
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
