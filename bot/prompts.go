package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// promptState is an approval or question shown in the thread.
type promptState struct {
	id        string
	requestID string
	prompt    adapters.Prompt
	ref       *adapters.MessageRef
	open      bool
	// answers collects typed answers of a multi-question prompt, by index.
	questions []approvals.Question
	answers   map[int]string
}

// maxDetail bounds what a prompt shows of a tool's input; the full input is
// stored with the approval.
const maxDetail = 2000

func (w *worker) onCanUseTool(ctx context.Context, cr *claudeproc.ControlRequest) {
	c := cr.CanUseTool
	log := w.log.With("request", cr.RequestID, "tool", c.ToolName)
	cwd := w.cwd(ctx)
	question := c.ToolName == "AskUserQuestion"

	if !question {
		rules, err := w.rules(ctx)
		if err != nil {
			log.Error("load rules", "err", err)
		}
		switch effect, rule := approvals.Evaluate(rules, w.ref.ChannelKey(), w.key, c.ToolName, c.Input, cwd); effect {
		case approvals.EffectDeny:
			msg := fmt.Sprintf("Denied by the rule %q (%s scope).", "deny "+rule.Spec(), rule.Scope)
			if err := w.proc.Deny(cr.RequestID, msg, false); err != nil {
				log.Warn("answer can_use_tool", "err", err)
			}
			w.b.audit(ctx, w.key, "rule", "deny", c.ToolName, rule.Spec(), true)
			w.notice(ctx, fmt.Sprintf("%s was denied by the rule `deny %s`.", c.ToolName, rule.Spec()), false)
			return
		case approvals.EffectAllow:
			if err := w.proc.Allow(cr.RequestID, c.Input, nil); err != nil {
				log.Warn("answer can_use_tool", "err", err)
			}
			w.b.audit(ctx, w.key, "rule", "allow", c.ToolName, rule.Spec(), true)
			return
		}
	}

	if w.unattended() {
		// Nobody is asked during an unattended scheduled run: only allow
		// rules let tools through.
		msg := fmt.Sprintf("This is an unattended scheduled run (schedule %d): only the channel's allow rules apply, and %s is not allowed by any. Ask an admin to add a rule (rules add allow %s(…)) or to set the schedule to park requests.", w.schedRun.schedule.ID, c.ToolName, c.ToolName)
		if err := w.proc.Deny(cr.RequestID, msg, false); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		w.b.audit(ctx, w.key, "scheduler", "deny", c.ToolName, "unattended run", true)
		w.notice(ctx, fmt.Sprintf("%s was denied: unattended scheduled run, and no allow rule covers it.", c.ToolName), false)
		return
	}
	var qs []approvals.Question
	if question {
		var err error
		qs, err = approvals.ParseQuestions(c.Input)
		if err != nil || len(qs) == 0 {
			log.Warn("unreadable AskUserQuestion input", "err", err)
			_ = w.proc.Deny(cr.RequestID, "The question could not be shown to the user: "+errString(err), false)
			return
		}
	}
	p := w.b.reg.Add(approvals.Request{
		RequestID: cr.RequestID, ThreadKey: w.key, ChannelKey: w.ref.ChannelKey(),
		Starter: w.thread.StartedBy, Tool: c.ToolName, Input: c.Input, ToolUseID: c.ToolUseID, Question: question,
	})
	kind := "tool"
	if question {
		kind = "question"
	}
	rec := store.Approval{
		ID: p.ID, RequestID: cr.RequestID, ThreadKey: w.key, ChannelKey: w.ref.ChannelKey(),
		SessionID: w.thread.SessionID, Tool: c.ToolName, Input: string(c.Input), AskedBy: w.thread.StartedBy,
		Kind: kind, State: string(approvals.StatePending), CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
	}
	// Persisted before it is shown: a click can only name what is stored.
	if err := w.b.store.SaveApproval(ctx, rec); err != nil {
		log.Error("store approval", "err", err)
	}
	w.flush(ctx, false)
	ps := &promptState{id: p.ID, requestID: cr.RequestID, open: true, questions: qs, answers: map[int]string{}}
	shown := *c
	if in := bytes.TrimSpace(c.Input); (len(in) == 0 || string(in) == "{}") && len(w.toolInputs[c.ToolUseID]) > 0 {
		// 2.1.330 asks about ExitPlanMode with an empty input; show the
		// plan the model wrote in its tool call. What runs is still the
		// request's own input.
		shown.Input = w.toolInputs[c.ToolUseID]
	}
	ps.prompt = buildPrompt(p.ID, &shown, qs)
	ref, err := w.ad.Ask(ctx, w.ref, ps.prompt)
	if err != nil {
		log.Error("show prompt", "err", err)
	} else {
		ps.ref = &ref
		if err := w.b.store.SetApprovalPromptRef(ctx, p.ID, formatMessageRef(ref)); err != nil {
			log.Error("store approval prompt ref", "err", err)
		}
	}
	w.prompts[p.ID] = ps
	w.updateIdle()
}

func buildPrompt(id string, c *claudeproc.CanUseTool, qs []approvals.Question) adapters.Prompt {
	if c.ToolName == "AskUserQuestion" {
		p := adapters.Prompt{ID: id, Kind: adapters.PromptQuestion, Title: "Claude asks", Tool: c.ToolName}
		for _, q := range qs {
			aq := adapters.Question{Text: q.Text, Header: q.Header, Multi: q.Multi}
			for _, o := range q.Options {
				aq.Options = append(aq.Options, adapters.Option{Label: o.Label, Description: o.Description})
			}
			p.Questions = append(p.Questions, aq)
		}
		return p
	}
	title := c.ToolName + " wants to run"
	if c.Description != "" {
		title += ": " + oneLine(c.Description)
	}
	return adapters.Prompt{
		ID: id, Kind: adapters.PromptApproval, Title: title, Tool: c.ToolName,
		Detail: shorten(approvalDetail(c), maxDetail), Choices: adapters.ApprovalChoices,
	}
}

// approvalDetail shows exactly what would run: the command, or a diff-like
// view of an edit.
func approvalDetail(c *claudeproc.CanUseTool) string {
	var in map[string]any
	_ = json.Unmarshal(c.Input, &in)
	s := func(k string) string { v, _ := in[k].(string); return v }
	switch c.ToolName {
	case "Bash":
		return "$ " + s("command")
	case "Write":
		return s("file_path") + "\n" + prefixLines(strings.TrimSuffix(s("content"), "\n"), "+ ")
	case "ExitPlanMode":
		return s("plan")
	case "Edit":
		return s("file_path") + "\n" + prefixLines(s("old_string"), "- ") + "\n" + prefixLines(s("new_string"), "+ ")
	case "Read":
		return s("file_path")
	case "WebFetch":
		return s("url")
	}
	b, _ := json.MarshalIndent(in, "", "  ")
	return string(b)
}

func prefixLines(s, p string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = p + l
	}
	return strings.Join(lines, "\n")
}

func errString(err error) string {
	if err == nil {
		return "no questions"
	}
	return err.Error()
}

// rules are the permission rules that can apply to this thread.
func (w *worker) rules(ctx context.Context) ([]approvals.Rule, error) {
	all, err := w.b.store.Rules(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]approvals.Rule, 0, len(all))
	for _, r := range all {
		out = append(out, approvals.Rule{ID: r.ID, Scope: approvals.Scope(r.Scope), ScopeKey: r.ScopeKey, Effect: approvals.Effect(r.Effect), Tool: r.Tool, Pattern: r.Pattern})
	}
	return out, nil
}

// onAction handles a click: the Stop button, or a choice on a prompt.
func (w *worker) onAction(ctx context.Context, ev adapters.Event) {
	if ev.Choice == "stop" {
		w.cmdStop(ctx, ev, nil)
		return
	}
	ps := w.prompts[ev.PromptID]
	if ps == nil {
		// Not live in this run: an old prompt (a restart expired it) or a
		// forged id.
		if a, ok, _ := w.b.store.GetApproval(ctx, ev.PromptID); ok && a.ThreadKey == w.key {
			w.b.tell(ctx, w.ref, ev.User, fmt.Sprintf("This request is no longer open (%s).", a.State))
		}
		w.b.audit(ctx, w.key, ev.User.ID, "refused", ev.PromptID, "click on a prompt that is not open", false)
		return
	}
	if ps.prompt.Kind == adapters.PromptQuestion {
		if ev.Choice == "deny" {
			w.decide(ctx, ps, ev.User, approvals.Decision{Choice: approvals.ChoiceDeny, Reason: ev.Reason})
			return
		}
		if len(ev.Answers) > 0 {
			w.answerAll(ctx, ps, ev.User, ev.Answers)
			return
		}
		w.answerValues(ctx, ps, ev.User, ev.Values)
		return
	}
	choice := approvals.Choice(ev.Choice)
	switch choice {
	case approvals.ChoiceAllow, approvals.ChoiceAllowThread, approvals.ChoiceAllowAlways, approvals.ChoiceDeny:
	default:
		w.b.audit(ctx, w.key, ev.User.ID, "refused", ps.id, "unknown choice "+ev.Choice, false)
		return
	}
	w.decide(ctx, ps, ev.User, approvals.Decision{Choice: choice, Reason: ev.Reason})
}

// typedReply resolves the oldest open prompt of the thread from a typed
// message: "allow", "allow thread", "allow always", "deny [reason]", or
// option numbers / free text for a question. It reports whether the message
// was taken as a reply.
func (w *worker) typedReply(ctx context.Context, ev adapters.Event, text string) bool {
	ps := w.oldestOpen()
	if ps == nil {
		return false
	}
	if ps.prompt.Kind == adapters.PromptApproval {
		choice, reason, ok := approvals.ParseChoice(text)
		if !ok {
			return false
		}
		w.decide(ctx, ps, ev.User, approvals.Decision{Choice: choice, Reason: reason})
		return true
	}
	if choice, reason, ok := approvals.ParseChoice(text); ok && choice == approvals.ChoiceDeny {
		w.decide(ctx, ps, ev.User, approvals.Decision{Choice: approvals.ChoiceDeny, Reason: reason})
		return true
	}
	w.answerValues(ctx, ps, ev.User, []string{text})
	return true
}

func (w *worker) oldestOpen() *promptState {
	for _, p := range w.b.reg.PendingFor(w.key) {
		if ps := w.prompts[p.ID]; ps != nil && ps.open {
			return ps
		}
	}
	return nil
}

// answerValues records the answer to the next unanswered question; when all
// are answered, the question prompt is decided.
func (w *worker) answerValues(ctx context.Context, ps *promptState, user adapters.User, values []string) {
	if !w.b.reg.MayDecide(user.ID, w.thread.StartedBy) {
		w.refuse(ctx, ps, user)
		return
	}
	next := -1
	for i := range ps.questions {
		if _, ok := ps.answers[i]; !ok {
			next = i
			break
		}
	}
	if next < 0 {
		return
	}
	q := ps.questions[next]
	ans, err := approvals.ParseAnswer(q, strings.Join(values, ","))
	if err != nil {
		w.b.tell(ctx, w.ref, user, "That answer does not fit: "+err.Error())
		return
	}
	ps.answers[next] = ans
	if len(ps.answers) < len(ps.questions) {
		w.notice(ctx, fmt.Sprintf("Noted “%s” for: %s", ans, q.Text), false)
		return
	}
	answers := make(map[string]string, len(ps.questions))
	for i, q := range ps.questions {
		answers[q.Text] = ps.answers[i]
	}
	w.decide(ctx, ps, user, approvals.Decision{Choice: approvals.ChoiceAllow, Answers: answers})
}

// answerAll records answers given with a prompt's controls (one entry per
// question, "" for those left open); when every question has one, the
// prompt is decided.
func (w *worker) answerAll(ctx context.Context, ps *promptState, user adapters.User, answers []string) {
	if !w.b.reg.MayDecide(user.ID, w.thread.StartedBy) {
		w.refuse(ctx, ps, user)
		return
	}
	for i, a := range answers {
		if i >= len(ps.questions) || strings.TrimSpace(a) == "" {
			continue
		}
		ans, err := approvals.ParseAnswer(ps.questions[i], a)
		if err != nil {
			w.b.tell(ctx, w.ref, user, "That answer does not fit: "+err.Error())
			return
		}
		ps.answers[i] = ans
	}
	if len(ps.answers) < len(ps.questions) {
		var open []string
		for i, q := range ps.questions {
			if _, ok := ps.answers[i]; !ok {
				open = append(open, q.Text)
			}
		}
		w.b.tell(ctx, w.ref, user, "Still to answer: "+strings.Join(open, "; "))
		return
	}
	final := make(map[string]string, len(ps.questions))
	for i, q := range ps.questions {
		final[q.Text] = ps.answers[i]
	}
	w.decide(ctx, ps, user, approvals.Decision{Choice: approvals.ChoiceAllow, Answers: final})
}

func (w *worker) refuse(ctx context.Context, ps *promptState, user adapters.User) {
	who := w.thread.StartedBy
	w.b.audit(ctx, w.key, user.ID, "refused", ps.id, "not allowed to decide "+ps.prompt.Tool, false)
	w.b.tell(ctx, w.ref, user, fmt.Sprintf("Only %s (who started this thread) or an admin can decide this.", who))
}

// decide applies a decision: the first valid one wins, and exactly one
// control_response is written.
func (w *worker) decide(ctx context.Context, ps *promptState, user adapters.User, d approvals.Decision) {
	d.By = user.ID
	d.At = w.b.now()
	p, err := w.b.reg.Decide(ps.id, d)
	if err != nil {
		var already *approvals.AlreadyDecidedError
		switch {
		case errors.Is(err, approvals.ErrNotAllowed):
			w.refuse(ctx, ps, user)
		case errors.As(err, &already):
			w.b.audit(ctx, w.key, user.ID, "refused", ps.id, "already decided", false)
			w.b.tell(ctx, w.ref, user, "Already decided by "+already.By+".")
		case errors.Is(err, approvals.ErrExpired):
			w.b.tell(ctx, w.ref, user, "This request has expired.")
		case errors.Is(err, approvals.ErrCancelled):
			w.b.tell(ctx, w.ref, user, "This request was cancelled.")
		default:
			w.b.tell(ctx, w.ref, user, "Could not decide: "+err.Error())
		}
		return
	}
	cwd := w.cwd(ctx)
	var outcome string
	var sendErr error
	switch d.Choice {
	case approvals.ChoiceDeny:
		msg := d.Reason
		if msg == "" {
			msg = "Denied by " + user.ID + "."
		} else {
			msg = "Denied by " + user.ID + ": " + d.Reason
		}
		sendErr = w.procDeny(ps.requestID, msg)
		outcome = "Denied by " + user.ID
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
				sendErr = w.procDeny(ps.requestID, "The answer could not be passed on: "+err.Error())
				break
			}
			outcome = "Answered by " + user.ID + ": " + formatAnswers(ps.questions, d.Answers)
		} else {
			outcome = "Allowed by " + user.ID
		}
		if d.Choice == approvals.ChoiceAllowThread || d.Choice == approvals.ChoiceAllowAlways {
			outcome += " " + w.saveAllowRule(ctx, p, d, cwd)
		}
		if sendErr == nil {
			sendErr = w.procAllow(ps.requestID, in)
		}
	}
	if sendErr != nil {
		w.log.Warn("send decision to claude", "err", sendErr)
		outcome += " (but Claude Code had already stopped)"
	}
	state := string(p.State)
	rec := store.Approval{State: state, DecidedBy: user.ID, Choice: string(d.Choice), Scope: scopeOf(d.Choice), Reason: d.Reason, DecidedAt: d.At}
	w.persistDecision(ctx, ps.id, rec)
	w.b.audit(ctx, w.key, user.ID, string(d.Choice), p.Tool, shorten(string(p.Input), 500), true)
	w.closePrompt(ctx, ps, adapters.PromptDecided, outcome)
	w.b.reg.Forget(ps.id)
}

// saveAllowRule stores the rule an "Allow for thread" or "Always allow"
// decision makes, and says what it allows. A call no safe rule can describe
// is allowed once only.
func (w *worker) saveAllowRule(ctx context.Context, p approvals.Pending, d approvals.Decision, cwd string) string {
	r, ok := approvals.RuleFor(p, cwd)
	if !ok {
		return "(once only: no rule can safely describe this call)"
	}
	what := "for this thread"
	if r.Scope == approvals.ScopeChannel {
		what = "always in this channel"
	}
	if _, err := w.b.store.AddRule(ctx, store.Rule{Scope: string(r.Scope), ScopeKey: r.ScopeKey, Effect: string(r.Effect), Tool: r.Tool, Pattern: r.Pattern, CreatedBy: d.By, CreatedAt: d.At}); err != nil {
		w.log.Error("store rule", "err", err)
		return "(once only: the rule could not be saved)"
	}
	return what + " (" + r.Spec() + ")"
}

func scopeOf(c approvals.Choice) string {
	switch c {
	case approvals.ChoiceAllowThread:
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

func (w *worker) procAllow(requestID string, in json.RawMessage) error {
	if w.proc == nil {
		return errNoProcess
	}
	return w.proc.Allow(requestID, in, nil)
}

func (w *worker) procDeny(requestID, msg string) error {
	if w.proc == nil {
		return errNoProcess
	}
	return w.proc.Deny(requestID, msg, false)
}

// persistDecision records the final state of an approval, keeping what was
// stored when it was asked.
func (w *worker) persistDecision(ctx context.Context, id string, upd store.Approval) {
	a, ok, err := w.b.store.GetApproval(ctx, id)
	if err != nil || !ok {
		w.log.Error("load approval", "id", id, "err", err)
		return
	}
	a.State, a.DecidedBy, a.Choice, a.Scope, a.Reason, a.DecidedAt = upd.State, upd.DecidedBy, upd.Choice, upd.Scope, upd.Reason, upd.DecidedAt
	if _, err := w.b.store.DecideApproval(ctx, id, string(approvals.StatePending), a); err != nil {
		w.log.Error("store decision", "id", id, "err", err)
	}
}

func (w *worker) closePrompt(ctx context.Context, ps *promptState, state adapters.PromptState, outcome string) {
	ps.open = false
	ps.prompt.State = state
	ps.prompt.Outcome = outcome
	if ps.ref != nil {
		if err := w.ad.UpdatePrompt(ctx, *ps.ref, ps.prompt); err != nil {
			w.log.Warn("update prompt", "err", err)
		}
	}
	delete(w.prompts, ps.id)
	w.updateIdle()
}

// onCancelRequest: the CLI withdrew a request (the turn was interrupted).
func (w *worker) onCancelRequest(ctx context.Context, requestID string) {
	p, ok := w.b.reg.Cancel(requestID)
	if !ok {
		return
	}
	w.persistDecision(ctx, p.ID, store.Approval{State: string(approvals.StateCancelled), Reason: "cancelled by Claude Code", DecidedAt: w.b.now()})
	if ps := w.prompts[p.ID]; ps != nil {
		w.closePrompt(ctx, ps, adapters.PromptCancelled, "Cancelled: the turn was stopped.")
	}
	w.b.reg.Forget(p.ID)
}

// onExpired: nobody decided in time. The tool is denied and the prompt
// says it expired.
func (w *worker) onExpired(ctx context.Context, p approvals.Pending) {
	if ps := w.prompts[p.ID]; ps != nil {
		if err := w.procDeny(ps.requestID, "Nobody approved this in time; it expired."); err != nil {
			w.log.Debug("deny expired request", "err", err)
		}
	}
	w.settleExpired(ctx, p, "Expired: nobody decided in time.")
}

func (w *worker) settleExpired(ctx context.Context, p approvals.Pending, outcome string) {
	w.persistDecision(ctx, p.ID, store.Approval{State: string(approvals.StateExpired), Reason: outcome, DecidedAt: w.b.now()})
	if ps := w.prompts[p.ID]; ps != nil {
		w.closePrompt(ctx, ps, adapters.PromptExpired, outcome)
	}
	w.b.reg.Forget(p.ID)
}

// promptFromApproval rebuilds a prompt from its stored record (after a
// restart) so that it can be updated.
func promptFromApproval(a store.Approval) adapters.Prompt {
	c := &claudeproc.CanUseTool{ToolName: a.Tool, Input: json.RawMessage(a.Input)}
	var qs []approvals.Question
	if a.Kind == "question" {
		qs, _ = approvals.ParseQuestions(c.Input)
	}
	return buildPrompt(a.ID, c, qs)
}
