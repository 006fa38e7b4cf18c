package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
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
	// num names the prompt in its thread ("#2", "allow 2").
	num    int
	prompt adapters.Prompt
	ref    *adapters.MessageRef
	open   bool
	// call is what an approval asks, as the rules read it.
	call approvals.Call
	// answers collects typed answers of a multi-question prompt, by index.
	questions []approvals.Question
	answers   map[int]string
}

func (w *worker) onCanUseTool(ctx context.Context, cr *claudeproc.ControlRequest) {
	c := cr.CanUseTool
	log := w.log.With("request", cr.RequestID, "tool", c.ToolName)
	call := w.call(ctx, c.ToolName, c.Input)
	question := c.ToolName == approvals.ToolAskUserQuestion

	if !question && w.settledByRules(ctx, cr, call) {
		return
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
		RequestID: cr.RequestID, ThreadKey: string(w.key), ChannelKey: w.ref.ChannelKey(),
		Starter: w.thread.StartedBy, Tool: c.ToolName, Input: c.Input, ToolUseID: c.ToolUseID, Question: question,
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
	if err := w.b.store.SaveApproval(ctx, rec); err != nil {
		log.Error("store approval", "err", err)
	}
	w.flush(ctx, false)
	w.promptSeq++
	ps := &promptState{id: p.ID, requestID: cr.RequestID, num: w.promptSeq, call: call, open: true, questions: qs, answers: map[int]string{}}
	shown := *c
	if in := bytes.TrimSpace(c.Input); (len(in) == 0 || string(in) == "{}") && len(w.toolInputs[c.ToolUseID]) > 0 {
		// 2.1.330 asks about ExitPlanMode with an empty input; show the
		// plan the model wrote in its tool call. What runs is still the
		// request's own input.
		shown.Input = w.toolInputs[c.ToolUseID]
	}
	ps.prompt = buildPrompt(p.ID, &shown, qs)
	ps.prompt.Title = fmt.Sprintf("%s · prompt #%d", ps.prompt.Title, ps.num)
	if !question {
		ps.prompt.Choices = w.offeredChoices(call)
	}
	ps.prompt.Note = w.promptNote(ps)
	w.prompts[p.ID] = ps
	ref, err := w.ad.Ask(ctx, w.ref, ps.prompt)
	if err != nil {
		// Fail closed: nobody can decide what nobody could see whole.
		log.Error("show prompt", "err", err)
		w.failPrompt(ctx, ps, "the prompt could not be shown: "+err.Error())
		return
	}
	ps.ref = &ref
	if err := w.b.store.SetApprovalPromptRef(ctx, p.ID, ref.String()); err != nil {
		log.Error("store approval prompt ref", "err", err)
	}
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
	switch effect, rule := approvals.EvaluateCall(rules, call); effect {
	case approvals.EffectDeny:
		msg := fmt.Sprintf("Denied by the rule %q (%s scope).", "deny "+rule.Spec(), rule.Scope)
		if err := w.proc.Deny(cr.RequestID, msg, false); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		w.b.audit(ctx, w.key, "rule", "deny", c.ToolName, rule.Spec(), true)
		w.notice(ctx, fmt.Sprintf("%s was denied by the rule `deny %s`.", c.ToolName, rule.Spec()), false)
		return true
	case approvals.EffectAllow:
		if err := w.proc.Allow(cr.RequestID, c.Input, nil); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		w.b.audit(ctx, w.key, "rule", "allow", c.ToolName, rule.Spec(), true)
		return true
	}
	if w.thread.Mode == modeAcceptEdits && approvals.AcceptEdit(call) {
		// The CLI runs in default mode (its own acceptEdits also runs
		// shell writes unasked); the bot gives the mode its meaning.
		if err := w.proc.Allow(cr.RequestID, c.Input, nil); err != nil {
			log.Warn("answer can_use_tool", "err", err)
		}
		w.b.audit(ctx, w.key, "mode", "allow", c.ToolName, modeAcceptEdits, true)
		return true
	}
	return false
}

// call is a tool call of this thread as the rules read it, its path's
// symlinks resolved.
func (w *worker) call(ctx context.Context, tool string, input json.RawMessage) approvals.Call {
	c := approvals.Call{
		ChannelKey: w.ref.ChannelKey(), ThreadKey: string(w.key), Tool: tool, Input: input,
		Cwd: w.cwd(ctx), Own: w.b.cfg.ProtectedPaths,
	}
	if p, ok := approvals.CallPath(c); ok {
		c.Resolved = resolveExisting(p)
	}
	return c
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

// offeredChoices are the choices of an approval prompt: Allow, the grants
// that can describe the call, Deny. "Always allow" makes a channel rule,
// so it is offered only in threads an admin started (an admin deciding in
// someone else's thread can still type it).
func (w *worker) offeredChoices(call approvals.Call) []adapters.Choice {
	ok := map[adapters.ChoiceID]bool{adapters.ChoiceAllow: true, adapters.ChoiceDeny: true}
	for _, g := range approvals.GrantChoices(call) {
		if g != approvals.ChoiceAllowAlways || w.b.isAdmin(w.thread.StartedBy) {
			ok[adapters.ChoiceID(g)] = true
		}
	}
	var out []adapters.Choice
	for _, c := range adapters.ApprovalChoices {
		if ok[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// promptNote says how to name the prompt and what each grant would allow.
func (w *worker) promptNote(ps *promptState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Prompt #%d (id `%s`): with several open, name it: `allow %d`, `deny %d [reason]`.", ps.num, ps.id[:6], ps.num, ps.num)
	for _, c := range ps.prompt.Choices {
		r, ok := approvals.GrantRule(ps.call, approvals.Choice(c.ID))
		if !ok {
			continue
		}
		where := "in this thread"
		if r.Scope == approvals.ScopeChannel {
			where = "in this channel, every thread and scheduled run"
		}
		fmt.Fprintf(&b, "\n%s: `%s` %s.", c.Label, r.Spec(), where)
	}
	if approvals.Protected(ps.call) {
		b.WriteString("\nThis file configures Claude Code, git or the bot: it is decided one call at a time.")
	}
	return b.String()
}

// failPrompt denies a request that could not be put before a person.
func (w *worker) failPrompt(ctx context.Context, ps *promptState, why string) {
	if err := w.procDeny(ps.requestID, "Denied: "+why); err != nil {
		w.log.Warn("deny unshown request", "err", err)
	}
	if p, ok := w.b.reg.Cancel(ps.requestID); ok {
		w.persistDecision(ctx, p.ID, store.Approval{State: string(approvals.StateCancelled), Reason: why, DecidedAt: w.b.now()})
	}
	w.b.reg.Forget(ps.id)
	w.b.audit(ctx, w.key, "bot", "deny", ps.prompt.Tool, why, true)
	delete(w.prompts, ps.id)
	w.notice(ctx, fmt.Sprintf("%s was denied: %s.", ps.prompt.Tool, why), true)
	w.updateIdle()
}

func buildPrompt(id string, c *claudeproc.CanUseTool, qs []approvals.Question) adapters.Prompt {
	if c.ToolName == approvals.ToolAskUserQuestion {
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
		title += ": " + shorten(oneLine(c.Description), 200)
	}
	// The detail is whole: the adapter uploads what does not fit.
	return adapters.Prompt{
		ID: id, Kind: adapters.PromptApproval, Title: title, Tool: c.ToolName,
		Detail: approvalDetail(c), Choices: choicesByID(adapters.ChoiceAllow, adapters.ChoiceDeny),
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
	ps := w.prompts[c.PromptID]
	if ps == nil {
		// Not live in this run: an old prompt (a restart expired it) or a
		// forged id.
		if a, ok, _ := w.b.store.GetApproval(ctx, c.PromptID); ok && a.ThreadKey == string(w.key) {
			w.b.tell(ctx, w.ref, user, fmt.Sprintf("This request is no longer open (%s).", a.State))
		}
		w.b.audit(ctx, w.key, user.ID, "refused", c.PromptID, "click on a prompt that is not open", false)
		return
	}
	if ps.prompt.Kind == adapters.PromptQuestion {
		if c.Choice == adapters.ChoiceDeny {
			w.decide(ctx, ps, user, approvals.Decision{Choice: approvals.ChoiceDeny, Reason: c.Reason})
			return
		}
		if len(c.Answers) > 0 {
			w.answerAll(ctx, ps, user, c.Answers)
			return
		}
		// No answers (a forged click): the next question gets an empty
		// answer, which does not fit any question.
		w.answerValues(ctx, ps, user, nil)
		return
	}
	if !offers(ps.prompt, c.Choice) && c.Choice != adapters.ChoiceAllowAlways {
		w.b.audit(ctx, w.key, user.ID, "refused", ps.id, "choice not offered: "+string(c.Choice), false)
		w.b.tell(ctx, w.ref, user, "That choice is not offered for this request.")
		return
	}
	w.decide(ctx, ps, user, approvals.Decision{Choice: approvals.Choice(c.Choice), Reason: c.Reason})
}

// offers reports whether the prompt offers the choice.
func offers(p adapters.Prompt, id adapters.ChoiceID) bool {
	for _, c := range p.Choices {
		if c.ID == id {
			return true
		}
	}
	return false
}

func choicesByID(ids ...adapters.ChoiceID) []adapters.Choice {
	var out []adapters.Choice
	for _, c := range adapters.ApprovalChoices {
		if slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// typedReply takes a typed message as a decision when it is one: "allow
// [thread|folder|always] [ref]", "deny [ref] [reason]", "#N <answer>", or,
// from someone who may decide, option numbers or words answering the one
// open question. With more than one prompt open a decision must name its
// prompt. It reports whether the message was taken (it then never reaches
// Claude).
func (w *worker) typedReply(ctx context.Context, ev adapters.Event, text string) bool {
	open := w.openPrompts()
	td, isDecision := parseTypedReply(text)
	if !isDecision {
		// Free text answers the one open question, from someone who may
		// decide; from anyone else it is talk for Claude.
		if len(open) != 1 || open[0].prompt.Kind != adapters.PromptQuestion || !w.mayChange(ev.User.ID) {
			return false
		}
		w.answerValues(ctx, open[0], ev.User, []string{text})
		return true
	}
	if len(open) == 0 {
		if td.Choice == approvals.ChoiceDeny && td.Reason != "" && td.Ref == "" {
			return false // "deny the rumours…": talk, nothing to decide
		}
		w.b.tell(ctx, w.ref, ev.User, "No request is waiting for a decision in this thread.")
		return true
	}
	ps, why := resolveRef(open, &td)
	if ps == nil {
		w.b.tell(ctx, w.ref, ev.User, why)
		return true
	}
	if ps.prompt.Kind == adapters.PromptQuestion {
		switch {
		case td.Choice == approvals.ChoiceDeny:
			w.decide(ctx, ps, ev.User, approvals.Decision{Choice: approvals.ChoiceDeny, Reason: td.Reason})
		case td.answer != "":
			w.answerValues(ctx, ps, ev.User, []string{td.answer})
		default:
			w.b.tell(ctx, w.ref, ev.User, fmt.Sprintf("Prompt #%d is a question: answer it with an option number or your own words (`#%d <answer>`).", ps.num, ps.num))
		}
		return true
	}
	if td.Choice == "" {
		w.b.tell(ctx, w.ref, ev.User, fmt.Sprintf("Prompt #%d wants `allow %d` or `deny %d [reason]`.", ps.num, ps.num, ps.num))
		return true
	}
	if !offers(ps.prompt, adapters.ChoiceID(td.Choice)) && td.Choice != approvals.ChoiceAllowAlways {
		w.b.tell(ctx, w.ref, ev.User, fmt.Sprintf("`%s` is not offered for prompt #%d.", adapterTyped(td.Choice), ps.num))
		return true
	}
	w.decide(ctx, ps, ev.User, approvals.Decision{Choice: td.Choice, Reason: td.Reason})
	return true
}

// typedDecision is a parsed typed decision, or "#N <answer>" for a
// question (Choice "", answer set).
type typedDecision struct {
	approvals.Typed
	answer string
	// full is what followed "deny", for a deny whose first word turns out
	// not to name a prompt.
	full string
}

// parseTypedReply reads a typed decision, also in the form "#N <decision
// or answer>".
func parseTypedReply(text string) (typedDecision, bool) {
	text = strings.TrimSpace(text)
	if t, ok := approvals.ParseTyped(text); ok {
		return typedDecision{Typed: t, full: afterFirstWord(text)}, true
	}
	first, rest, _ := strings.Cut(text, " ")
	n, ok := strings.CutPrefix(first, "#")
	if !ok || n == "" || len(n) > 6 || strings.Trim(n, "0123456789") != "" {
		return typedDecision{}, false
	}
	rest = strings.TrimSpace(rest)
	if t, ok := approvals.ParseTyped(rest); ok && (t.Ref == "" || t.RefOrReason) {
		t.Ref, t.RefOrReason = n, false
		if t.Choice == approvals.ChoiceDeny {
			t.Reason = afterFirstWord(rest)
		}
		return typedDecision{Typed: t}, true
	}
	if rest == "" {
		return typedDecision{}, false
	}
	return typedDecision{Typed: approvals.Typed{Ref: n}, answer: rest}, true
}

func afterFirstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\n"); i >= 0 {
		return strings.TrimSpace(s[i:])
	}
	return ""
}

// resolveRef finds the open prompt td names: by number, by id prefix, or
// the only one open. A deny's hex-looking first word that names no prompt
// is read as the start of its reason. When none is found it says why.
func resolveRef(open []*promptState, td *typedDecision) (*promptState, string) {
	if td.Ref != "" {
		var found []*promptState
		for _, ps := range open {
			if strconv.Itoa(ps.num) == td.Ref || (len(td.Ref) >= 4 && strings.HasPrefix(ps.id, td.Ref)) {
				found = append(found, ps)
			}
		}
		switch {
		case len(found) == 1:
			return found[0], ""
		case len(found) > 1:
			return nil, "That names more than one open prompt. " + listOpen(open)
		case !td.RefOrReason:
			return nil, fmt.Sprintf("No open prompt is named %s here. %s", td.Ref, listOpen(open))
		}
		td.Ref, td.Reason = "", td.full
	}
	if len(open) == 1 {
		return open[0], ""
	}
	return nil, fmt.Sprintf("%d prompts are open: name the one you decide (`allow 2`, `deny 2 [reason]`, or its id). %s", len(open), listOpen(open))
}

func listOpen(open []*promptState) string {
	parts := make([]string, 0, len(open))
	for _, ps := range open {
		parts = append(parts, fmt.Sprintf("#%d %s (id %s)", ps.num, ps.prompt.Tool, ps.id[:6]))
	}
	return "Open: " + strings.Join(parts, "; ") + "."
}

func adapterTyped(c approvals.Choice) string {
	for _, ac := range adapters.ApprovalChoices {
		if ac.ID == adapters.ChoiceID(c) {
			return ac.Typed
		}
	}
	return string(c)
}

// openPrompts are the thread's open prompts, oldest first.
func (w *worker) openPrompts() []*promptState {
	var out []*promptState
	for _, p := range w.b.reg.PendingFor(string(w.key)) {
		if ps := w.prompts[p.ID]; ps != nil && ps.open {
			out = append(out, ps)
		}
	}
	return out
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
	downgraded := ""
	if d.Choice == approvals.ChoiceAllowAlways && !w.b.isAdmin(user.ID) && w.mayChange(user.ID) {
		// A channel rule is for admins; the starter gets the thread grant.
		d.Choice, downgraded = approvals.ChoiceAllow, " (Always allow is for admins: allowed once)"
		if _, ok := approvals.GrantRule(ps.call, approvals.ChoiceAllowThread); ok {
			d.Choice, downgraded = approvals.ChoiceAllowThread, " (Always allow is for admins: for this thread instead)"
		}
		w.b.audit(ctx, w.key, user.ID, "refused", ps.id, "allow_always by a non-admin, downgraded to "+string(d.Choice), false)
	}
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
		if d.Choice != approvals.ChoiceAllow {
			outcome += " " + w.saveAllowRule(ctx, ps.call, d)
		}
		outcome += downgraded
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

// saveAllowRule stores the rule a grant decision makes, and says what it
// allows. A call no safe rule can describe is allowed once only.
func (w *worker) saveAllowRule(ctx context.Context, call approvals.Call, d approvals.Decision) string {
	r, ok := approvals.GrantRule(call, d.Choice)
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
