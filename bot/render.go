package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// turn is what the bot shows of one turn: live text messages (one per
// assistant message), tool lines, notices, then a footer.
type turn struct {
	prompt  string
	started time.Time
	storeID int64

	texts     map[string]*liveText // by assistant message id
	textOrder []*liveText
	retry     *adapters.MessageRef
	lastCost  float64
}

type liveText struct {
	id string
	// blocks accumulate deltas without copying what came before: a delta
	// costs its own length, not the message's.
	blocks   map[int]*strings.Builder
	order    []int
	streamed bool // text came from stream deltas; assistant lines are then ignored
	ref      *adapters.MessageRef
	shown    string
	dirty    bool
	final    bool
}

func (l *liveText) text() string {
	if len(l.order) == 1 {
		return l.blocks[l.order[0]].String()
	}
	parts := make([]string, 0, len(l.order))
	for _, i := range l.order {
		if s := l.blocks[i].String(); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

func (l *liveText) block(index int) *strings.Builder {
	b := l.blocks[index]
	if b == nil {
		b = new(strings.Builder)
		l.blocks[index] = b
		l.order = append(l.order, index)
	}
	return b
}

// set replaces a block's text (the complete block, when it ends).
func (l *liveText) set(index int, s string) {
	b := l.block(index)
	if b.Len() == len(s) && b.String() == s {
		return
	}
	b.Reset()
	b.WriteString(s)
	l.dirty = true
}

func (l *liveText) appendDelta(index int, s string) {
	l.block(index).WriteString(s)
	l.dirty = true
}

type toolLine struct {
	id      string
	tool    adapters.Tool
	ref     *adapters.MessageRef
	started time.Time
	shownAt time.Time
	done    bool
}

func (w *worker) beginTurn(qp *queuedPrompt) {
	w.setStatus("is thinking…")
	w.turn = &turn{
		prompt:  qp.text,
		started: w.b.now(),
		texts:   make(map[string]*liveText),
	}
	w.startTicker()
}

// setStatus shows (or, empty, clears) the platform's "working" indicator.
func (w *worker) setStatus(status string) {
	if st, ok := w.ad.(adapters.Statuser); ok {
		if err := st.SetStatus(context.Background(), w.ref, status); err != nil {
			w.log.Debug("set status", "err", err)
		}
	}
}

func (w *worker) startTicker() {
	if w.ticker == nil {
		w.ticker = time.NewTicker(5 * time.Second)
		w.tickC = w.ticker.C
	}
}

func (w *worker) stopTicker() {
	if w.ticker != nil {
		w.ticker.Stop()
		w.ticker, w.tickC = nil, nil
	}
}

// handleProc handles one event of the thread's claude process.
func (w *worker) handleProc(ctx context.Context, ev claudeproc.Event) {
	switch e := ev.(type) {
	case *claudeproc.SystemInit:
		w.started = true
		w.initial = nil
		w.keepMode(ctx, e.PermissionMode)
		if w.turn == nil {
			// A turn Claude started by itself: a background task finished,
			// a wakeup or cron fired.
			w.beginTurn(&queuedPrompt{text: "(started by Claude)"})
		}
		if w.turn.storeID == 0 {
			id, err := w.b.store.StartTurn(ctx, store.Turn{
				ThreadKey: string(w.key), ChannelKey: w.ref.ChannelKey(), SessionID: e.SessionID,
				Prompt: w.turn.prompt, StartedAt: w.turn.started,
			})
			if err != nil {
				w.log.Error("store turn start", "err", err)
			}
			w.turn.storeID = id
		}
		if e.SessionID != "" && e.SessionID != w.thread.SessionID {
			w.thread.SessionID = e.SessionID
			w.saveThread(ctx)
		}
		w.updateIdle()
	case *claudeproc.StreamEvent:
		w.onStream(ctx, e)
	case *claudeproc.Assistant:
		w.onAssistant(ctx, e)
	case *claudeproc.User:
		for _, r := range e.ToolResults {
			w.toolDone(ctx, r.ToolUseID, r.IsError, string(r.Content))
		}
	case *claudeproc.Truncated:
		if e.Type == "user" && e.ToolUseID != "" {
			w.toolDone(ctx, e.ToolUseID, false, fmt.Sprintf("(output of %d bytes, too large to show)", e.OriginalSize))
		}
	case *claudeproc.ControlRequest:
		if e.CanUseTool != nil {
			w.onCanUseTool(ctx, e)
		}
	case *claudeproc.ControlCancelRequest:
		w.onCancelRequest(ctx, e.RequestID)
	case *claudeproc.CommandLifecycle:
		w.onLifecycle(ctx, e)
	case *claudeproc.APIRetry:
		w.onRetry(ctx, e)
	case *claudeproc.CompactBoundary:
		w.flush(ctx, false)
		w.notice(ctx, "Context compacted: older messages of this conversation were summarised.", false)
	case *claudeproc.PermissionDenied:
		w.toolDenied(ctx, e.ToolUseID, e.Message)
	case *claudeproc.Informational:
		if e.Level == "warning" || e.Level == "error" {
			w.notice(ctx, e.Content, e.Level == "error")
		}
	case *claudeproc.Result:
		w.onResult(ctx, e)
	case *claudeproc.Exited:
		w.onExited(ctx, e)
	case *claudeproc.ParseError:
		w.log.Warn("claude printed a malformed line", "err", e.Err)
	}
}

func (w *worker) ensureTurn() *turn {
	if w.turn == nil {
		w.beginTurn(&queuedPrompt{text: "(started by Claude)"})
	}
	return w.turn
}

func (w *worker) onStream(ctx context.Context, e *claudeproc.StreamEvent) {
	if e.ParentToolUseID != "" {
		return // subagent text is not streamed into the thread
	}
	t := w.ensureTurn()
	switch {
	case e.EventType == "content_block_start" && e.Block != nil && e.Block.Type == "text":
		lt := w.live(t, e.APIMessageID)
		lt.streamed = true
		lt.set(e.Index, e.Block.Text)
	case e.EventType == "content_block_delta" && e.DeltaType == "text_delta":
		lt := w.live(t, e.APIMessageID)
		lt.streamed = true
		lt.appendDelta(e.Index, e.Delta)
		w.scheduleFlush(ctx)
	case e.EventType == "content_block_stop" && e.Block != nil && e.Block.Type == "text":
		lt := w.live(t, e.APIMessageID)
		lt.set(e.Index, e.Block.Text)
		w.scheduleFlush(ctx)
	case e.EventType == "message_stop":
		// The assistant message is complete: show its text as final now,
		// not at the end of the turn.
		if lt := t.texts[e.APIMessageID]; lt != nil {
			w.finalizeText(ctx, lt)
		}
	}
}

func (w *worker) live(t *turn, id string) *liveText {
	lt := t.texts[id]
	if lt == nil {
		lt = &liveText{id: id, blocks: make(map[int]*strings.Builder)}
		t.texts[id] = lt
		t.textOrder = append(t.textOrder, lt)
	}
	return lt
}

func (w *worker) onAssistant(ctx context.Context, e *claudeproc.Assistant) {
	t := w.ensureTurn()
	if e.IsAPIError {
		return // the result that follows states it
	}
	for _, b := range e.Blocks {
		switch b.Type {
		case "text":
			if e.ParentToolUseID != "" {
				continue
			}
			lt := w.live(t, e.MessageID)
			if !lt.streamed {
				// No stream events (the CLI fell back to a non-streaming
				// request): the assistant line is the text.
				lt.set(len(lt.order), b.Text)
				w.scheduleFlush(ctx)
			}
		case "tool_use":
			if lt := t.texts[e.MessageID]; lt != nil && e.ParentToolUseID == "" {
				// The text before a tool call is complete: show it whole
				// before the tool line; text after the call starts anew.
				w.finalizeText(ctx, lt)
				delete(t.texts, e.MessageID)
			}
			w.flush(ctx, false)
			depth := 0
			if e.ParentToolUseID != "" {
				depth = 1
			}
			w.toolStart(ctx, b.ID, b.Name, b.Input, depth)
		}
	}
}

func (w *worker) scheduleFlush(ctx context.Context) {
	interval := time.Duration(0)
	if p, ok := w.ad.(adapters.Pacer); ok {
		interval = p.EditInterval()
	}
	if interval <= 0 || w.unposted() {
		// Show the first words at once; pace the edits after that.
		w.flush(ctx, false)
		return
	}
	if w.flushTimer == nil {
		w.flushTimer = time.NewTimer(interval)
		w.flushC = w.flushTimer.C
	}
}

// unposted: some live text has words but no message yet.
func (w *worker) unposted() bool {
	if w.turn == nil {
		return false
	}
	for _, lt := range w.turn.textOrder {
		if lt.ref == nil && !lt.final && lt.dirty {
			return true
		}
	}
	return false
}

// finalizeText shows one message's text as complete.
func (w *worker) finalizeText(ctx context.Context, lt *liveText) {
	if lt.final {
		return
	}
	text := lt.text()
	lt.dirty = false
	m := adapters.Message{Kind: adapters.KindText, Text: text, Final: true}
	if lt.ref == nil {
		if text == "" {
			return
		}
		ref, err := w.ad.Post(ctx, w.ref, m)
		if err != nil {
			w.log.Warn("post text", "err", err)
			return
		}
		lt.ref = &ref
	} else if err := w.ad.Edit(ctx, *lt.ref, m); err != nil {
		w.log.Warn("edit text", "err", err)
		return
	}
	lt.shown, lt.final = text, true
}

// flush shows changed live text. final marks every text complete.
func (w *worker) flush(ctx context.Context, final bool) {
	if w.turn == nil {
		return
	}
	for _, lt := range w.turn.textOrder {
		if lt.final {
			continue
		}
		if !lt.dirty && !final {
			continue
		}
		text := lt.text()
		lt.dirty = false
		if text == "" && lt.ref == nil {
			continue
		}
		m := adapters.Message{Kind: adapters.KindText, Text: text, Final: final}
		if lt.ref == nil {
			ref, err := w.ad.Post(ctx, w.ref, m)
			if err != nil {
				w.log.Warn("post text", "err", err)
				lt.dirty = true
				continue
			}
			lt.ref = &ref
		} else if text != lt.shown || final {
			if err := w.ad.Edit(ctx, *lt.ref, m); err != nil {
				w.log.Warn("edit text", "err", err)
				lt.dirty = true
				continue
			}
		}
		lt.shown = text
		lt.final = final
	}
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
	return shorten(s, 1000)
}

// toolStart shows a tool call. Tool lines belong to the worker, not the
// turn: a background subagent's tools outlive the turn that started it.
func (w *worker) toolStart(ctx context.Context, id, name string, input json.RawMessage, depth int) {
	if id == "" || w.tools[id] != nil {
		return
	}
	w.toolInputs[id] = input
	tl := &toolLine{id: id, tool: adapters.Tool{Name: name, Input: keyInput(name, input), State: adapters.ToolRunning, Depth: depth}, started: w.b.now()}
	w.tools[id] = tl
	ref, err := w.ad.Post(ctx, w.ref, adapters.Message{Kind: adapters.KindTool, Tool: &tl.tool})
	if err != nil {
		w.log.Warn("post tool line", "err", err)
		return
	}
	tl.ref, tl.shownAt = &ref, w.b.now()
	w.startTicker()
}

func (w *worker) toolDone(ctx context.Context, id string, isErr bool, output string) {
	tl := w.tools[id]
	if tl == nil || tl.done {
		return
	}
	w.endTool(tl)
	if isErr {
		tl.tool.State = adapters.ToolFailed
	} else {
		tl.tool.State = adapters.ToolOK
	}
	tl.tool.Elapsed = w.b.now().Sub(tl.started)
	if (tl.tool.Name == "Agent" || tl.tool.Name == "Task") && strings.Contains(output, "agent launched") {
		// The CLI's launch receipt is meant for the model, not for people.
		output = "running in the background"
	}
	tl.tool.Preview = shorten(strings.TrimSpace(output), 300)
	tl.tool.Output = output
	w.showTool(ctx, tl)
	delete(w.tools, id)
}

// endTool marks a tool line finished; the caller sets how.
func (w *worker) endTool(tl *toolLine) {
	tl.done = true
	delete(w.toolInputs, tl.id)
}

// closeTools ends the lines of tools that will not report any more
// (interrupted, or their process is gone). With mainOnly, a background
// subagent's tools (nested) are left running.
func (w *worker) closeTools(ctx context.Context, mainOnly bool, why string) {
	now := w.b.now()
	for id, tl := range w.tools {
		if tl.done || (mainOnly && tl.tool.Depth > 0) {
			continue
		}
		w.endTool(tl)
		tl.tool.State = adapters.ToolFailed
		tl.tool.Elapsed = now.Sub(tl.started)
		tl.tool.Preview = why
		w.showTool(ctx, tl)
		delete(w.tools, id)
	}
}

func (w *worker) toolDenied(ctx context.Context, id, why string) {
	tl := w.tools[id]
	if tl == nil || tl.done {
		return
	}
	w.endTool(tl)
	defer delete(w.tools, id)
	tl.tool.State = adapters.ToolDenied
	tl.tool.Elapsed = w.b.now().Sub(tl.started)
	tl.tool.Preview = shorten(why, 300)
	w.showTool(ctx, tl)
}

func (w *worker) showTool(ctx context.Context, tl *toolLine) {
	m := adapters.Message{Kind: adapters.KindTool, Tool: &tl.tool}
	if tl.ref == nil {
		ref, err := w.ad.Post(ctx, w.ref, m)
		if err == nil {
			tl.ref = &ref
		}
		return
	}
	if err := w.ad.Edit(ctx, *tl.ref, m); err != nil {
		w.log.Warn("edit tool line", "err", err)
	}
	tl.shownAt = w.b.now()
}

// tick refreshes the elapsed time of running tools.
func (w *worker) tick(ctx context.Context) {
	if w.turn == nil && len(w.tools) == 0 {
		w.stopTicker()
		return
	}
	now := w.b.now()
	for _, tl := range w.tools {
		if tl.done || tl.ref == nil {
			continue
		}
		tl.tool.Elapsed = now.Sub(tl.started)
		w.showTool(ctx, tl)
	}
}

func (w *worker) onRetry(ctx context.Context, e *claudeproc.APIRetry) {
	t := w.ensureTurn()
	what := e.Error
	if e.ErrorStatus != 0 {
		what = fmt.Sprintf("%d %s", e.ErrorStatus, e.Error)
	}
	text := fmt.Sprintf("Claude API error (%s); retrying, attempt %d of %d in %s.", what, e.Attempt, e.MaxRetries, e.RetryDelay().Round(100*time.Millisecond))
	m := adapters.Message{Kind: adapters.KindNotice, Text: text, Error: true}
	if t.retry == nil {
		ref, err := w.ad.Post(ctx, w.ref, m)
		if err == nil {
			t.retry = &ref
		}
		return
	}
	_ = w.ad.Edit(ctx, *t.retry, m)
}

func (w *worker) onLifecycle(ctx context.Context, e *claudeproc.CommandLifecycle) {
	qp := w.queued[e.CommandUUID]
	if qp == nil {
		return
	}
	excerpt := shorten(oneLine(qp.text), 80)
	show := func(text string) {
		m := adapters.Message{Kind: adapters.KindNotice, Text: text}
		if !qp.shown {
			ref, err := w.ad.Post(ctx, w.ref, m)
			if err == nil {
				qp.notice, qp.shown = ref, true
			}
			return
		}
		_ = w.ad.Edit(ctx, qp.notice, m)
	}
	switch e.State {
	case "queued":
		show("Queued: “" + excerpt + "” (Claude takes it up when the current step ends).")
	case "started":
		show("Taken up: “" + excerpt + "”.")
		delete(w.queued, e.CommandUUID)
		if w.turn == nil {
			w.beginTurn(qp)
		} else if w.turn.storeID == 0 {
			w.turn.prompt = qp.text
		}
	case "cancelled":
		show("Dropped: “" + excerpt + "”.")
		delete(w.queued, e.CommandUUID)
	case "completed":
		delete(w.queued, e.CommandUUID)
	}
	w.updateIdle()
}

func (w *worker) onResult(ctx context.Context, r *claudeproc.Result) {
	if w.initial != nil && r.IsError && !w.started && resumeFailed(r) {
		w.resumeFailed(ctx)
		return
	}
	t := w.ensureTurn()
	w.flush(ctx, true)
	now := w.b.now()
	cost := r.TurnCostUSD()
	if err := w.b.store.FinishTurn(ctx, store.Turn{
		ID: t.storeID, ThreadKey: string(w.key), SessionID: r.SessionID, EndedAt: now,
		ResultSubtype: r.Subtype, IsError: r.IsError, CostUSD: cost,
		InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens,
		CacheReadTokens: r.Usage.CacheReadInputTokens, CacheCreationTokens: r.Usage.CacheCreationInputTokens,
		DurationMS: r.DurationMS, NumTurns: r.NumTurns,
	}); err != nil && t.storeID != 0 {
		w.log.Error("store turn result", "err", err)
	}
	// The turn's own tools that never reported back (interrupted) end here;
	// a background subagent's go on.
	w.closeTools(ctx, true, "interrupted")
	w.footer(ctx, r, cost)
	w.setStatus("")
	w.turn = nil
	if w.schedRun != nil {
		out := runOutcome{res: store.ScheduleRun{SessionID: r.SessionID, Result: r.Result, CostUSD: cost,
			InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens, NumTurns: r.NumTurns}}
		if r.IsError {
			msg := strings.Join(r.Errors, "; ")
			if msg == "" {
				msg = r.Result
			}
			out.err = fmt.Errorf("%s: %s", r.Subtype, msg)
		}
		w.finishRun(out)
		// Free the slot now: a reply in this thread resumes the session.
		w.stop("")
	}
	if len(w.tools) == 0 {
		w.stopTicker()
	}
	w.thread.State = "idle"
	w.saveThread(ctx)
	w.updateIdle()
}

func resumeFailed(r *claudeproc.Result) bool {
	for _, e := range r.Errors {
		if strings.Contains(e, "No conversation found") {
			return true
		}
	}
	return false
}

// resumeFailed: the stored session is gone (its files were removed, or it
// never got written). Start a fresh one and send the prompt again.
func (w *worker) resumeFailed(ctx context.Context) {
	qp := w.initial
	w.log.Warn("stored session could not be resumed; starting a fresh one", "session", w.thread.SessionID)
	w.stop("")
	w.thread.SessionID = ""
	w.notice(ctx, "The previous conversation of this thread could not be resumed, so this is a fresh session: Claude does not remember what was said before.", false)
	if err := w.ensureProcess(ctx); err != nil {
		w.notice(ctx, "Could not start Claude Code: "+err.Error(), true)
		return
	}
	w.beginTurn(qp)
	if err := w.proc.Send(qp.msg); err != nil {
		w.turn = nil
		w.notice(ctx, "Claude Code was not reachable; send your message again.", true)
	}
	w.updateIdle()
}

func (w *worker) footer(ctx context.Context, r *claudeproc.Result, cost float64) {
	dur := r.Duration()
	if dur == 0 && w.turn != nil {
		dur = w.b.now().Sub(w.turn.started)
	}
	stats := fmt.Sprintf("%s · $%.4f · %d %s", adapters.FormatDuration(dur), cost, r.NumTurns, plural(r.NumTurns, "turn", "turns"))
	var text string
	isErr := r.IsError
	switch {
	case !r.IsError:
		text = "✓ " + stats
	case r.TerminalReason == "aborted_streaming" || r.TerminalReason == "aborted_tools":
		text = "■ Stopped · " + stats
		isErr = false
	case r.TerminalReason == "api_error" || r.APIErrorStatus != 0:
		msg := r.Result
		if msg == "" {
			msg = "the model API failed"
		}
		if r.APIErrorStatus != 0 {
			text = fmt.Sprintf("✗ API error %d: %s · %s", r.APIErrorStatus, msg, stats)
		} else {
			text = "✗ API error: " + msg + " · " + stats
		}
	default:
		msg := strings.Join(r.Errors, "; ")
		if msg == "" {
			msg = r.Result
		}
		if msg == "" {
			msg = r.Subtype
		}
		text = "✗ Error: " + shorten(msg, 300) + " · " + stats
	}
	if _, err := w.ad.Post(ctx, w.ref, adapters.Message{Kind: adapters.KindFooter, Text: text, Error: isErr}); err != nil {
		w.log.Warn("post footer", "err", err)
	}
}

func (w *worker) onExited(ctx context.Context, e *claudeproc.Exited) {
	if w.proc == nil {
		return
	}
	reason := ""
	if e.MidTurn || w.turn != nil {
		tail := strings.TrimSpace(lastLine(e.Info.StderrTail))
		msg := "Claude Code stopped unexpectedly (" + e.Info.Reason + ")"
		if tail != "" {
			msg += ": " + shorten(tail, 300)
		}
		w.flush(ctx, true)
		w.notice(ctx, msg+". Your next message resumes the conversation.", true)
		reason = "Claude Code stopped"
	}
	w.afterExit(ctx, e.Info, reason)
}

func (w *worker) finishTurnAbruptly(ctx context.Context, reason string) {
	t := w.turn
	w.flush(ctx, true)
	w.closeTools(ctx, false, "stopped: "+reason)
	if t.storeID != 0 {
		if err := w.b.store.FinishTurn(ctx, store.Turn{ID: t.storeID, ThreadKey: string(w.key), EndedAt: w.b.now(), ResultSubtype: "aborted", IsError: true}); err != nil {
			w.log.Error("store aborted turn", "err", err)
		}
	}
	if reason != "" {
		if _, err := w.ad.Post(ctx, w.ref, adapters.Message{Kind: adapters.KindFooter, Text: "✗ Turn ended: " + reason, Error: true}); err != nil {
			w.log.Warn("post footer", "err", err)
		}
	}
	w.turn = nil
	w.setStatus("")
	w.stopTicker()
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
