package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// The worker's side of approvals and questions: a can_use_tool request is
// settled by a rule or put on the desk and shown; what the desk decides is
// carried out here (the CLI answered, the store written, the prompt
// edited).

func (w *worker) onCanUseTool(ctx context.Context, cr *claudeproc.ControlRequest) {
	c := cr.CanUseTool
	log := w.log.With("request", cr.RequestID, "tool", c.ToolName)
	call := w.call(ctx, c.ToolName, c.Input)
	question := c.ToolName == approvals.ToolAskUserQuestion

	if !question && w.settledByRules(ctx, cr, call) {
		return
	}
	ask := &thread.Ask{RequestID: cr.RequestID, Tool: c.ToolName, Question: question, Input: c.Input}
	if w.parts.beforeAsk(ctx, ask); ask.Deny != "" {
		if err := w.sess.deny(cr.RequestID, ask.Deny); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		return
	}
	var qs []approvals.Question
	if question {
		var err error
		qs, err = approvals.ParseQuestions(c.Input)
		if err != nil || len(qs) == 0 {
			log.Warn("unreadable AskUserQuestion input", "err", err)
			_ = w.sess.proc.Deny(cr.RequestID, "The question could not be shown to the user: "+errString(err), false)
			return
		}
	}
	p := w.desk.add(approvals.Request{
		RequestID: cr.RequestID, ThreadKey: string(w.key), ChannelKey: w.ref.ChannelKey(),
		Starter: w.thread.StartedBy, Tool: c.ToolName, Input: c.Input, ToolUseID: c.ToolUseID, Question: question,
		ExpiresAt: ask.Deadline,
	})
	kind := "tool"
	if question {
		kind = "question"
	}
	rec := store.Approval{
		ID: p.ID, RequestID: cr.RequestID, ThreadKey: string(w.key), ChannelKey: w.ref.ChannelKey(),
		SessionID: w.thread.SessionID, Tool: c.ToolName, Input: string(c.Input), AskedBy: w.thread.StartedBy,
		Kind: kind, State: string(approvals.StatePending), CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
	}
	// Persisted before it is shown: a click can only name what is stored.
	if err := w.store.SaveApproval(ctx, rec); err != nil {
		log.Error("store approval", "err", err)
	}
	w.view.flush(ctx, false)
	shown := *c
	if in := bytes.TrimSpace(c.Input); (len(in) == 0 || string(in) == "{}") && len(w.view.toolInput(c.ToolUseID)) > 0 {
		// 2.1.330 asks about ExitPlanMode with an empty input; show the
		// plan the model wrote in its tool call. What runs is still the
		// request's own input.
		shown.Input = w.view.toolInput(c.ToolUseID)
	}
	ps := w.desk.track(p, call, &shown, qs, w.thread.StartedBy)
	// The call has not started: its line says what it waits for, with no
	// running time, until someone decides.
	w.view.toolWaiting(ctx, c.ToolUseID)
	ref, err := w.ad.Ask(ctx, w.ref, ps.prompt)
	if err != nil {
		// Fail closed: nobody can decide what nobody could see whole.
		log.Error("show prompt", "err", err)
		w.failPrompt(ctx, ps, "the prompt could not be shown: "+err.Error())
		return
	}
	ps.ref = &ref
	w.lines.shown(ctx, &w.view, p.ID, ref, c.ToolUseID)
	asked := thread.Asked{Num: ps.num, Tool: p.Tool, Question: p.Question, Expires: p.ExpiresAt}
	each(w.parts, func(h thread.Asks) { h.Asked(ctx, asked) })
	w.updateIdle()
}

// settledByRules decides a tool call without a person when a rule, or the
// thread's acceptEdits mode, settles it; it reports whether it did.
func (w *worker) settledByRules(ctx context.Context, cr *claudeproc.ControlRequest, call approvals.Call) bool {
	c := cr.CanUseTool
	log := w.log.With("request", cr.RequestID, "tool", c.ToolName)
	rules, err := w.rules(ctx)
	if err != nil {
		log.Error("load rules", "err", err)
	}
	if r, denied := sendFileDeniedBy(rules, call); denied {
		// Posting a file shows what a deny rule keeps from being read.
		msg := fmt.Sprintf("Denied by the rule %q (%s scope): posting the file would show what it keeps from being read.", "deny "+r.Spec(), r.Scope)
		if err := w.sess.proc.Deny(cr.RequestID, msg, false); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		w.audit(ctx, "rule", "deny", c.ToolName, r.Spec(), true)
		w.notice(ctx, fmt.Sprintf("%s was denied by the rule `deny %s`.", c.ToolName, r.Spec()), false)
		return true
	}
	switch effect, rule := approvals.EvaluateCall(sendFileRules(rules, call, hiddenBy(w.cfg.Runner)), call); effect {
	case approvals.EffectDeny:
		msg := fmt.Sprintf("Denied by the rule %q (%s scope).", "deny "+rule.Spec(), rule.Scope)
		if err := w.sess.proc.Deny(cr.RequestID, msg, false); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		w.audit(ctx, "rule", "deny", c.ToolName, rule.Spec(), true)
		w.notice(ctx, fmt.Sprintf("%s was denied by the rule `deny %s`.", c.ToolName, rule.Spec()), false)
		return true
	case approvals.EffectAllow:
		if err := w.sess.proc.Allow(cr.RequestID, c.Input, nil); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		w.audit(ctx, "rule", "allow", c.ToolName, rule.Spec(), true)
		return true
	}
	if w.thread.Mode == modeAcceptEdits && approvals.AcceptEdit(call) {
		// The CLI runs in default mode (its own acceptEdits also runs
		// shell writes unasked); the bot gives the mode its meaning.
		if err := w.sess.proc.Allow(cr.RequestID, c.Input, nil); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		w.audit(ctx, "mode", "allow", c.ToolName, modeAcceptEdits, true)
		return true
	}
	return false
}

// call is a tool call of this thread as the rules read it, its path's
// symlinks resolved, and the words of a command resolved on demand. "~"
// is the HOME and CLAUDE_CONFIG_DIR the CLI's configuration that the bot's
// environment names; the runners' per-thread CLI homes are among the
// bot's own files (ProtectedPaths).
func (w *worker) call(ctx context.Context, tool string, input json.RawMessage) approvals.Call {
	c := approvals.Call{
		ChannelKey: w.ref.ChannelKey(), ThreadKey: string(w.key), Tool: tool, Input: input,
		Cwd: w.cwd(ctx), Own: w.cfg.ProtectedPaths, Home: envValue(w.cfg.Env, "HOME"), Resolve: resolveExisting,
	}
	if dir := envValue(w.cfg.Env, "CLAUDE_CONFIG_DIR"); dir != "" {
		c.CLIDirs = []string{dir}
	}
	if p, ok := approvals.CallPath(c); ok {
		c.Resolved = resolveExisting(p)
	}
	return c
}

// envValue is name's value in env ("NAME=value" entries), "" if absent.
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// the absolute path p (a file about to be written may not exist yet).
func resolveExisting(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if dir == "/" || dir == "." {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// rules are the permission rules that can apply to this thread, the
// built-in ones last.
func (w *worker) rules(ctx context.Context) ([]approvals.Rule, error) {
	all, err := w.store.Rules(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]approvals.Rule, 0, len(all))
	for _, r := range all {
		out = append(out, approvals.Rule{ID: r.ID, Scope: approvals.Scope(r.Scope), ScopeKey: r.ScopeKey, Effect: approvals.Effect(r.Effect), Tool: r.Tool, Pattern: r.Pattern})
	}
	return append(out, builtinRules...), nil
}

// failPrompt denies a request that could not be put before a person.
func (w *worker) failPrompt(ctx context.Context, ps *promptState, why string) {
	if err := w.sess.deny(ps.requestID, "Denied: "+why); err != nil {
		w.log.Warn("deny unshown request", "err", err)
	}
	if p, ok := w.desk.cancel(ps.requestID); ok {
		w.persistDecision(ctx, p.ID, store.Approval{State: string(approvals.StateCancelled), Reason: why, DecidedAt: w.now()})
		w.view.toolDenied(ctx, p.ToolUseID, "Denied: "+why)
	}
	w.desk.forget(ps.id)
	w.audit(ctx, "bot", "deny", ps.prompt.Tool, why, true)
	w.desk.drop(ps)
	w.notice(ctx, fmt.Sprintf("%s was denied: %s.", ps.prompt.Tool, why), true)
	w.updateIdle()
}

// onClick handles a click: the Stop control, or a choice on a prompt.
func (w *worker) onClick(ctx context.Context, user adapters.User, c adapters.Click) {
	if c.Choice == adapters.ChoiceStop {
		if !w.mayChange(user.ID) {
			w.refuseChange(ctx, user, "stop this thread")
			return
		}
		w.cmdStop(ctx, adapters.Event{Thread: w.ref, User: user}, nil)
		return
	}
	ps := w.desk.get(c.PromptID)
	if ps == nil && w.parts.click(ctx, user, c) {
		return // a part's own prompt (thread.Clicker)
	}
	if ps == nil {
		// Not live in this run: an old prompt (a restart expired it) or a
		// forged id.
		if a, ok, _ := w.store.GetApproval(ctx, c.PromptID); ok && a.ThreadKey == string(w.key) {
			w.tell(ctx, user, fmt.Sprintf("This request is no longer open (%s).", a.State))
		}
		w.audit(ctx, user.ID, "refused", c.PromptID, "click on a prompt that is not open", false)
		return
	}
	w.apply(ctx, user, w.desk.click(ps, user, w.thread.StartedBy, c))
}

// typedReply takes a typed message as a decision when the desk does; it
// reports whether it did (the message then never reaches Claude).
func (w *worker) typedReply(ctx context.Context, ev adapters.Event, text string) bool {
	v, taken := w.desk.typed(ev.User, w.thread.StartedBy, text)
	if taken {
		w.apply(ctx, ev.User, v)
	}
	return taken
}

// apply carries out what the desk decided about user's click or reply.
func (w *worker) apply(ctx context.Context, user adapters.User, v verdict) {
	for _, r := range v.refused {
		w.audit(ctx, user.ID, "refused", r.target, r.detail, false)
	}
	if v.tell != "" {
		w.tell(ctx, user, v.tell)
	}
	if v.note != "" {
		w.notice(ctx, v.note, false)
	}
	if v.decision != nil {
		w.carryOut(ctx, *v.decision)
	}
}

// carryOut applies a decision: exactly one control_response is written,
// a grant's rule is stored, the decision recorded and the prompt closed.
func (w *worker) carryOut(ctx context.Context, dc decision) {
	ps, p, d, by := dc.ps, dc.p, dc.d, dc.d.By
	var outcome string
	var sendErr error
	switch d.Choice {
	case approvals.ChoiceDeny:
		msg := "Denied by " + by + "."
		if d.Reason != "" {
			msg = "Denied by " + by + ": " + d.Reason
		}
		sendErr = w.sess.deny(ps.requestID, msg)
		outcome = "Denied by " + by
		if d.Reason != "" {
			outcome += ": " + d.Reason
		}
	default:
		in := p.Input
		if p.Question {
			var err error
			in, err = approvals.AnswerInput(p.Input, d.Answers)
			if err != nil {
				w.log.Error("build answers", "err", err)
				sendErr = w.sess.deny(ps.requestID, "The answer could not be passed on: "+err.Error())
				break
			}
			outcome = "Answered by " + by + ": " + formatAnswers(ps.questions, d.Answers)
		} else {
			outcome = "Allowed by " + by
		}
		if d.Choice != approvals.ChoiceAllow {
			outcome += " " + w.saveAllowRule(ctx, ps.grants, d)
		}
		outcome += dc.downgraded
		if sendErr == nil {
			sendErr = w.sess.allow(ps.requestID, in)
		}
	}
	if sendErr != nil {
		w.log.Warn("send decision to claude", "err", sendErr)
		outcome += " (but Claude Code had already stopped)"
	}
	rec := store.Approval{State: string(p.State), DecidedBy: by, Choice: string(d.Choice), Scope: scopeOf(d.Choice), Reason: d.Reason, DecidedAt: d.At}
	w.persistDecision(ctx, ps.id, rec)
	w.audit(ctx, by, string(d.Choice), p.Tool, text.Shorten(string(p.Input), 500), true)
	w.closePrompt(ctx, ps, adapters.PromptDecided, outcome)
	w.desk.forget(ps.id)
	// The tool line leaves its wait: it runs now, or it never will.
	if d.Choice == approvals.ChoiceDeny || sendErr != nil {
		w.view.toolDenied(ctx, p.ToolUseID, outcome)
	} else {
		w.view.toolAllowed(ctx, p.ToolUseID)
	}
}

// saveAllowRule stores the rule a grant decision makes, the one its
// prompt showed (grants), and says what it allows. A call no safe rule
// can describe is allowed once only.
func (w *worker) saveAllowRule(ctx context.Context, grants map[approvals.Choice]approvals.Rule, d approvals.Decision) string {
	r, ok := grants[d.Choice]
	if !ok {
		return "(once only: no rule can safely describe this call)"
	}
	what := "for this thread"
	if r.Scope == approvals.ScopeChannel {
		what = "always in this channel"
	}
	if _, err := w.store.AddRule(ctx, store.Rule{Scope: string(r.Scope), ScopeKey: r.ScopeKey, Effect: string(r.Effect), Tool: r.Tool, Pattern: r.Pattern, CreatedBy: d.By, CreatedAt: d.At}); err != nil {
		w.log.Error("store rule", "err", err)
		return "(once only: the rule could not be saved)"
	}
	return what + " (" + r.Spec() + ")"
}

func scopeOf(c approvals.Choice) string {
	switch c {
	case approvals.ChoiceAllowThread, approvals.ChoiceAllowFolder:
		return "thread"
	case approvals.ChoiceAllowAlways:
		return "channel"
	}
	return "once"
}

func formatAnswers(qs []approvals.Question, answers map[string]string) string {
	parts := make([]string, 0, len(qs))
	for _, q := range qs {
		parts = append(parts, answers[q.Text])
	}
	return strings.Join(parts, "; ")
}

// persistDecision records the final state of an approval, keeping what was
// stored when it was asked.
func (w *worker) persistDecision(ctx context.Context, id string, upd store.Approval) {
	a, ok, err := w.store.GetApproval(ctx, id)
	if err != nil || !ok {
		w.log.Error("load approval", "id", id, "err", err)
		return
	}
	a.State, a.DecidedBy, a.Choice, a.Scope, a.Reason, a.DecidedAt = upd.State, upd.DecidedBy, upd.Choice, upd.Scope, upd.Reason, upd.DecidedAt
	decided, err := w.store.DecideApproval(ctx, id, string(approvals.StatePending), a)
	if err != nil {
		w.log.Error("store decision", "id", id, "err", err)
	}
	if decided { // the one transition out of pending: told once
		w.cfg.Observer.ApprovalSettled(a.Kind, approvalOutcome(a.Kind, a.State))
	}
}

// closePrompt settles a prompt on the desk and shows how it ended.
func (w *worker) closePrompt(ctx context.Context, ps *promptState, state adapters.PromptState, outcome string) {
	w.desk.close(ps, state, outcome)
	if ps.ref != nil {
		if err := w.ad.UpdatePrompt(ctx, *ps.ref, ps.prompt); err != nil {
			w.log.Warn("update prompt", "err", err)
		}
	}
	w.updateIdle()
}

// onCancelRequest: the CLI withdrew a request (the turn was interrupted).
func (w *worker) onCancelRequest(ctx context.Context, requestID string) {
	w.cancelRequest(ctx, requestID, "cancelled by Claude Code", "Cancelled: the turn was stopped.")
}

// cancelRequest settles a withdrawn request: reason is recorded, outcome
// shown on its prompt.
func (w *worker) cancelRequest(ctx context.Context, requestID, reason, outcome string) {
	p, ok := w.desk.cancel(requestID)
	if !ok {
		return
	}
	w.persistDecision(ctx, p.ID, store.Approval{State: string(approvals.StateCancelled), Reason: reason, DecidedAt: w.now()})
	if ps := w.desk.get(p.ID); ps != nil {
		w.closePrompt(ctx, ps, adapters.PromptCancelled, outcome)
	}
	w.desk.forget(p.ID)
	w.view.toolDenied(ctx, p.ToolUseID, outcome)
}

// onExpired: nobody decided in time. The tool is denied and the prompt
// says it expired.
func (w *worker) onExpired(ctx context.Context, p approvals.Pending) {
	e := &thread.Expiry{Tool: p.Tool, Expires: p.ExpiresAt, Tell: "Nobody approved this in time; it expired.", Outcome: "Expired: nobody decided in time."}
	each(w.parts, func(h thread.Asks) { h.Expired(ctx, e) })
	if ps := w.desk.get(p.ID); ps != nil {
		if err := w.sess.deny(ps.requestID, e.Tell); err != nil {
			w.log.Debug("deny expired request", "err", err)
		}
	}
	w.settleExpired(ctx, p, e.Outcome)
	if e.Notice != "" {
		w.notice(ctx, e.Notice, false)
	}
}

// cancelPrompts closes the thread's open prompts, saying why.
func (w *worker) cancelPrompts(ctx context.Context, why string) {
	for _, p := range w.desk.pending() {
		w.cancelRequest(ctx, p.RequestID, why, "Cancelled: "+why+".")
	}
}

// expireAll expires every request of the thread, saying outcome.
func (w *worker) expireAll(ctx context.Context, outcome string) {
	for _, p := range w.desk.expireAll() {
		w.settleExpired(ctx, p, outcome)
	}
}

func (w *worker) settleExpired(ctx context.Context, p approvals.Pending, outcome string) {
	w.persistDecision(ctx, p.ID, store.Approval{State: string(approvals.StateExpired), Reason: outcome, DecidedAt: w.now()})
	if ps := w.desk.get(p.ID); ps != nil {
		w.closePrompt(ctx, ps, adapters.PromptExpired, outcome)
	}
	w.desk.forget(p.ID)
	w.view.toolDenied(ctx, p.ToolUseID, outcome)
}
