package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// The worker's handling of its claude process's events: each goes to the
// part it is for (the view shows text and tools, the desk takes requests),
// and the worker records turns and settles what ends with the process.

// handleProc handles one event of the thread's claude process.
func (w *worker) handleProc(ctx context.Context, ev claudeproc.Event) {
	switch e := ev.(type) {
	case *claudeproc.SystemInit:
		w.onInit(ctx, e)
	case *claudeproc.StreamEvent:
		w.view.onStream(ctx, e)
	case *claudeproc.Assistant:
		w.view.onAssistant(ctx, e)
	case *claudeproc.User:
		for _, r := range e.ToolResults {
			w.view.toolDone(ctx, r.ToolUseID, r.IsError, string(r.Content))
		}
	case *claudeproc.Truncated:
		if e.Type == "control_request" {
			w.notice(ctx, oversizedRequestText(e, w.cfg.MaxLineBytes), e.Refused == "")
		}
		if e.Type == "user" && e.ToolUseID != "" {
			w.view.toolDone(ctx, e.ToolUseID, false, fmt.Sprintf("(output of %d bytes, too large to show)", e.OriginalSize))
		}
	case *claudeproc.ControlRequest:
		if e.CanUseTool != nil {
			w.onCanUseTool(ctx, e)
		}
	case *claudeproc.MCPMessage:
		w.onMCP(e)
	case *claudeproc.ControlCancelRequest:
		w.onCancelRequest(ctx, e.RequestID)
	case *claudeproc.CommandLifecycle:
		w.onLifecycle(ctx, e)
	case *claudeproc.APIRetry:
		w.view.onRetry(ctx, e)
	case *claudeproc.CompactBoundary:
		w.view.flush(ctx, false)
		w.notice(ctx, compactedText(e), false)
	case *claudeproc.PermissionDenied:
		w.view.toolDenied(ctx, e.ToolUseID, e.Message)
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

// oversizedRequestText tells the thread of a control request over the
// line cap, which claudeproc answered without passing it on.
func oversizedRequestText(e *claudeproc.Truncated, limit int) string {
	if limit <= 0 {
		limit = claudeproc.DefaultMaxLineBytes
	}
	what := "Claude Code sent a request"
	if e.ToolName != "" {
		what = "Claude Code asked to use " + e.ToolName + " with a request"
	}
	size := fmt.Sprintf("%s of %d bytes, over the limit of %d bytes (CLAUDEOPS_MAX_LINE_BYTES)", what, e.OriginalSize, limit)
	if e.Refused == "" {
		return size + ", and it names no request to answer: the turn waits until its limit unless you stop it."
	}
	if e.Subtype == "can_use_tool" {
		return size + ": denied without being shown (too large to show). Claude was told to make the change in smaller pieces."
	}
	return size + ": refused (too large to read)."
}

// onInit: a turn starts (each turn prints system/init).
func (w *worker) onInit(ctx context.Context, e *claudeproc.SystemInit) {
	w.sess.initialized()
	w.keepMode(ctx, e.PermissionMode)
	// A turn Claude started by itself (a background task finished, a
	// wakeup or cron fired) begins here.
	t := w.view.ensureTurn()
	if t.storeID == 0 {
		id, err := w.store.StartTurn(ctx, store.Turn{
			ThreadKey: string(w.key), ChannelKey: w.ref.ChannelKey(), SessionID: e.SessionID,
			Prompt: t.prompt, StartedAt: t.started,
		})
		if err != nil {
			w.log.Error("store turn start", "err", err)
		}
		t.storeID = id
		w.tag.set(id)
		w.log.Info("turn started", "session", e.SessionID)
	}
	if t.storeID != 0 {
		w.settleTaken(ctx)
	}
	if e.SessionID != "" && e.SessionID != w.thread.SessionID {
		w.thread.SessionID = e.SessionID
		w.saveThread(ctx)
	}
	w.updateIdle()
}

func (w *worker) onLifecycle(ctx context.Context, e *claudeproc.CommandLifecycle) {
	qp := w.queued[e.CommandUUID]
	if qp == nil {
		return
	}
	excerpt := text.Shorten(text.OneLine(qp.text), 80)
	show := func(text string) {
		if !qp.shown {
			ref, err := w.ad.Post(ctx, w.ref, noticeMsg(text))
			if err == nil {
				qp.notice, qp.shown = ref, true
			}
			return
		}
		_ = w.ad.Edit(ctx, qp.notice, noticeMsg(text))
	}
	switch e.State {
	case "queued":
		show("Queued: “" + excerpt + "” (Claude takes it up when the current step ends).")
	case "started":
		show("Taken up: “" + excerpt + "”.")
		w.records.settle(ctx, qp.key)
		delete(w.queued, e.CommandUUID)
		if t := w.view.turn; t == nil {
			w.view.begin(qp.text)
			w.view.asked(qp.at)
		} else if t.storeID == 0 {
			t.prompt = qp.text
			w.view.asked(qp.at)
		}
	case "cancelled":
		show("Dropped: “" + excerpt + "”.")
		w.records.settle(ctx, qp.key)
		delete(w.queued, e.CommandUUID)
	case "completed":
		w.records.settle(ctx, qp.key)
		delete(w.queued, e.CommandUUID)
	}
	w.updateIdle()
}

func (w *worker) onResult(ctx context.Context, r *claudeproc.Result) {
	if w.sess.resumeLost(r) {
		w.resumeFailed(ctx)
		return
	}
	t := w.view.ensureTurn()
	cost := r.TurnCostUSD()
	in, out := turnTokens(r)
	// Recorded before it is shown (or owed until it is: records.go), and
	// the messages it took up with it.
	w.records.recordTurnEnd(ctx, t.storeID, store.Turn{
		ThreadKey: string(w.key), ChannelKey: w.ref.ChannelKey(), SessionID: r.SessionID, Prompt: t.prompt,
		StartedAt: t.started, EndedAt: w.now(),
		ResultSubtype: r.Subtype, IsError: r.IsError, CostUSD: cost,
		InputTokens: in, OutputTokens: out,
		CacheReadTokens: r.Usage.CacheReadInputTokens, CacheCreationTokens: r.Usage.CacheCreationInputTokens,
		DurationMS: r.DurationMS, NumTurns: r.NumTurns,
	})
	w.settleTaken(ctx)
	w.view.flush(ctx, true)
	w.log.Info("turn ended", "result", r.Subtype, "is_error", r.IsError, "cost_usd", cost,
		"input_tokens", in, "output_tokens", out, "duration_ms", r.DurationMS)
	w.cfg.Observer.TurnEnded(turnResult(r), w.now().Sub(t.started))
	w.cfg.Observer.Spent(w.ref, usageOf(r, cost))
	// The turn's own tools that never reported back (interrupted) end here;
	// a background subagent's go on.
	w.view.closeTools(ctx, true, "interrupted")
	w.view.footer(ctx, r, cost)
	w.view.end()
	end := &thread.TurnEnd{Result: r, Cost: cost, InputTokens: in, OutputTokens: out, Err: resultErr(r)}
	each(w.parts, func(h thread.TurnEnder) { h.AfterTurn(ctx, end) })
	if end.Release {
		w.stop("")
	}
	if !w.view.hasTools() {
		w.view.stopTicker()
	}
	w.thread.State = "idle"
	w.saveThread(ctx)
	w.updateIdle()
	// A slash command that waited for this turn runs now.
	if ev := w.slash.take(!w.view.running() && len(w.queued) == 0 && w.sess.live() && !w.sess.closing); ev != nil {
		w.handedOver = false
		w.onMessage(ctx, *ev)
		if !w.handedOver {
			w.records.settle(ctx, keyOf(*ev)) // refused or not sent: the thread was told
		}
	}
}

// resultErr is why the turn of r did not succeed (nil: it did).
func resultErr(r *claudeproc.Result) error {
	if !r.IsError {
		return nil
	}
	msg := strings.Join(r.Errors, "; ")
	if msg == "" {
		msg = r.Result
	}
	return fmt.Errorf("%s: %s", r.Subtype, msg)
}

// resumeFailed: the stored session is gone (its files were removed, or it
// never got written). Start a fresh one and send the prompt again.
func (w *worker) resumeFailed(ctx context.Context) {
	qp := w.sess.initial
	w.log.Warn("stored session could not be resumed; starting a fresh one", "session", w.thread.SessionID)
	w.cfg.Observer.ResumeLost()
	w.stop("")
	w.thread.SessionID = ""
	w.notice(ctx, "The previous conversation of this thread could not be resumed, so this is a fresh session: Claude does not remember what was said before.", false)
	if err := w.ensureProcess(ctx); err != nil {
		w.notice(ctx, "Could not start Claude Code: "+err.Error(), true)
		return
	}
	w.view.begin(qp.text)
	w.view.asked(qp.at)
	if err := w.sess.proc.Send(qp.msg); err != nil {
		w.view.turn = nil
		w.notice(ctx, "Claude Code was not reachable; send your message again.", true)
	}
	w.updateIdle()
}

func (w *worker) onExited(ctx context.Context, e *claudeproc.Exited) {
	if !w.sess.live() {
		return
	}
	// The bot did not stop it: stop drains its events and skips this one.
	w.cfg.Observer.ProcessCrashed()
	reason := ""
	if e.MidTurn || w.view.running() {
		tail := strings.TrimSpace(lastLine(e.Info.StderrTail))
		msg := "Claude Code stopped unexpectedly (" + e.Info.Reason + ")"
		if tail != "" {
			msg += ": " + text.Shorten(tail, 300)
		}
		w.view.flush(ctx, true)
		w.notice(ctx, msg+". Your next message resumes the conversation.", true)
		reason = "Claude Code stopped"
	}
	w.afterExit(ctx, e.Info, reason)
}

// stop ends the thread's process (if any): interrupting a running turn,
// expiring its pending approvals. reason, when set, is told to the thread.
func (w *worker) stop(reason string) {
	ctx := context.Background()
	if !w.sess.live() || w.sess.closing {
		return
	}
	if reason != "" {
		// Say why before the CLI cancels them as part of the interrupt.
		w.expireAll(ctx, "Expired: "+reason+".")
	}
	// Drain what it said before it ended, then let it go.
	info := w.sess.close(func(ev claudeproc.Event) { w.handleProc(ctx, ev) })
	w.afterExit(ctx, info, reason)
}

// afterExit forgets the process and settles what depended on it.
func (w *worker) afterExit(ctx context.Context, info claudeproc.ExitInfo, reason string) {
	w.sess.ended()
	w.slash.drop(ctx, w.records.settle) // it was for the session that ended
	why := reason
	if why == "" {
		why = "the session ended"
	}
	w.expireAll(ctx, "Expired: "+why+".")
	if w.view.running() {
		w.finishTurnAbruptly(ctx, reason)
	}
	w.view.closeTools(ctx, false, "stopped: "+why)
	// The thread has been told what became of them.
	w.settleTaken(ctx)
	for _, qp := range w.queued {
		w.records.settle(ctx, qp.key)
	}
	clear(w.queued)
	w.thread.State = "idle"
	w.saveThread(ctx)
	each(w.parts, func(h thread.Exiter) { h.OnExit(ctx, info.Reason) })
	w.log.Info("claude stopped", "reason", info.Reason)
	w.updateIdle()
}

func (w *worker) finishTurnAbruptly(ctx context.Context, reason string) {
	t := w.view.turn
	w.view.flush(ctx, true)
	w.view.closeTools(ctx, false, "stopped: "+reason)
	if t.storeID != 0 {
		// Told as the store records it: a turn whose process never began
		// it (a resume that failed) is no turn.
		w.cfg.Observer.TurnEnded(TurnAborted, w.now().Sub(t.started))
		w.records.recordTurnEnd(ctx, t.storeID, store.Turn{ThreadKey: string(w.key), EndedAt: w.now(), ResultSubtype: store.TurnAborted, IsError: true})
	}
	w.view.endAbruptly(ctx, reason)
}

// compactedText tells the thread that the CLI compacted its conversation.
func compactedText(e *claudeproc.CompactBoundary) string {
	how := "Context compacted"
	if e.Trigger == "auto" {
		how += " (the context was full)"
	}
	if e.PreTokens > 0 && e.PostTokens > 0 {
		return fmt.Sprintf("%s: %d → %d tokens; older messages of this conversation were summarised.", how, e.PreTokens, e.PostTokens)
	}
	return how + ": older messages of this conversation were summarised."
}
