package bot

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/claudeproc"
)

// desk keeps the thread's prompts (approvals and questions put before
// people) and decides what a click or a typed reply does to them. It does
// no I/O: what it decides comes back as a verdict, which the worker
// applies (answers the CLI, records it, posts and edits).
type desk struct {
	reg     *approvals.Registry
	key     string
	channel string // the thread's channel key: its admins decide
	isAdmin func(user string) bool
	now     func() time.Time

	prompts map[string]*promptState // by approval id
	seq     int                     // numbers the thread's prompts: #1, #2…
}

func newDesk(d deps) desk {
	return desk{reg: d.reg, key: string(d.key), channel: d.ref.ChannelKey(), isAdmin: d.isAdmin, now: d.now, prompts: make(map[string]*promptState)}
}

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
	// grants are the rules the grant choices on call store, made once:
	// the prompt shows, and a decision stores, these very values.
	grants map[approvals.Choice]approvals.Rule
	// answers collects typed answers of a multi-question prompt, by index.
	questions []approvals.Question
	answers   map[int]string
}

// verdict is what a click or a typed reply comes to. The worker applies
// it in this order: the refusals are audited, tell is said to the person,
// note to the thread, then the decision is carried out.
type verdict struct {
	refused  []refusal
	tell     string
	note     string
	decision *decision
}

// refusal is a refused attempt, for the audit log.
type refusal struct{ target, detail string }

// decision is a prompt the registry took a decision on: the worker answers
// the CLI, records it, and closes the prompt.
type decision struct {
	ps *promptState
	p  approvals.Pending
	d  approvals.Decision
	// downgraded says why the choice is not the one made ("" if it is).
	downgraded string
}

func told(text string) verdict { return verdict{tell: text} }

// add registers a request; it is pending from now.
func (k *desk) add(r approvals.Request) *approvals.Pending { return k.reg.Add(r) }

// track makes the prompt that puts p before people: numbered, with the
// choices that can describe the call (offered as starter's thread allows).
// shown is the request as people see it.
func (k *desk) track(p *approvals.Pending, call approvals.Call, shown *claudeproc.CanUseTool, qs []approvals.Question, starter string) *promptState {
	k.seq++
	ps := &promptState{id: p.ID, requestID: p.RequestID, num: k.seq, call: call, open: true, questions: qs, answers: map[int]string{}}
	ps.prompt = buildPrompt(p.ID, shown, qs)
	ps.prompt.Title = fmt.Sprintf("%s · prompt #%d", ps.prompt.Title, ps.num)
	if !p.Question {
		ps.grants = grantsFor(call)
		ps.prompt.Choices = offeredChoices(ps.grants, k.isAdmin(starter))
	}
	ps.prompt.Note = promptNote(ps)
	k.prompts[p.ID] = ps
	return ps
}

func (k *desk) get(id string) *promptState { return k.prompts[id] }

func (k *desk) hasOpen() bool { return k.openCount() > 0 }

// openCount is how many prompts wait for a person.
func (k *desk) openCount() int {
	n := 0
	for _, p := range k.prompts {
		if p.open {
			n++
		}
	}
	return n
}

// openPrompts are the thread's open prompts, oldest first.
func (k *desk) openPrompts() []*promptState {
	var out []*promptState
	for _, p := range k.reg.PendingFor(k.key) {
		if ps := k.prompts[p.ID]; ps != nil && ps.open {
			out = append(out, ps)
		}
	}
	return out
}

// pending are the thread's requests waiting for a decision.
func (k *desk) pending() []approvals.Pending { return k.reg.PendingFor(k.key) }

// cancel withdraws the request requestID; it reports false if none waits.
func (k *desk) cancel(requestID string) (approvals.Pending, bool) { return k.reg.Cancel(requestID) }

// expireAll expires every request of the thread (its process is going).
func (k *desk) expireAll() []approvals.Pending { return k.reg.ExpireThread(k.key) }

// forget drops a settled request from the registry.
func (k *desk) forget(id string) { k.reg.Forget(id) }

// drop forgets a prompt that was never shown.
func (k *desk) drop(ps *promptState) { delete(k.prompts, ps.id) }

// close marks a prompt settled (state, and what came of it) and forgets it.
func (k *desk) close(ps *promptState, state adapters.PromptState, outcome string) {
	ps.open = false
	ps.prompt.State = state
	ps.prompt.Outcome = outcome
	delete(k.prompts, ps.id)
}

// mayDecide: user is the thread's starter or an admin of its channel.
func (k *desk) mayDecide(user, starter string) bool { return k.reg.MayDecide(k.channel, user, starter) }

// click is what a choice made on the open prompt ps comes to.
func (k *desk) click(ps *promptState, user adapters.User, starter string, c adapters.Click) verdict {
	if ps.prompt.Kind == adapters.PromptQuestion {
		if c.Choice == adapters.ChoiceDeny {
			return k.decide(ps, user, starter, approvals.Decision{Choice: approvals.ChoiceDeny, Reason: c.Reason})
		}
		if len(c.Answers) > 0 {
			return k.answerAll(ps, user, starter, c.Answers)
		}
		// No answers (a forged click): the next question gets an empty
		// answer, which does not fit any question.
		return k.answerValues(ps, user, starter, nil)
	}
	if !offers(ps.prompt, c.Choice) && c.Choice != adapters.ChoiceAllowAlways {
		return verdict{refused: []refusal{{ps.id, "choice not offered: " + string(c.Choice)}}, tell: "That choice is not offered for this request."}
	}
	return k.decide(ps, user, starter, approvals.Decision{Choice: approvals.Choice(c.Choice), Reason: c.Reason})
}

// typed takes a typed message as a decision when it is one: "allow
// [thread|folder|always] [ref]", "deny [ref] [reason]", "#N <answer>", or,
// from someone who may decide, option numbers or words answering the one
// open question. With more than one prompt open a decision must name its
// prompt. It reports whether the message was taken (it then never reaches
// Claude).
func (k *desk) typed(user adapters.User, starter, text string) (verdict, bool) {
	open := k.openPrompts()
	td, isDecision := parseTypedReply(text)
	if !isDecision {
		// Free text answers the one open question, from someone who may
		// decide; from anyone else it is talk for Claude.
		if len(open) != 1 || open[0].prompt.Kind != adapters.PromptQuestion || !k.mayDecide(user.ID, starter) {
			return verdict{}, false
		}
		return k.answerValues(open[0], user, starter, []string{text}), true
	}
	if len(open) == 0 {
		if td.Choice == approvals.ChoiceDeny && td.Reason != "" && td.Ref == "" {
			return verdict{}, false // "deny the rumours…": talk, nothing to decide
		}
		return told("No request is waiting for a decision in this thread."), true
	}
	ps, why := resolveRef(open, &td)
	if ps == nil {
		return told(why), true
	}
	if ps.prompt.Kind == adapters.PromptQuestion {
		switch {
		case td.Choice == approvals.ChoiceDeny:
			return k.decide(ps, user, starter, approvals.Decision{Choice: approvals.ChoiceDeny, Reason: td.Reason}), true
		case td.answer != "":
			return k.answerValues(ps, user, starter, []string{td.answer}), true
		}
		return told(fmt.Sprintf("Prompt #%d is a question: answer it with an option number or your own words (`#%d <answer>`).", ps.num, ps.num)), true
	}
	if td.Choice == "" {
		return told(fmt.Sprintf("Prompt #%d wants `allow %d` or `deny %d [reason]`.", ps.num, ps.num, ps.num)), true
	}
	if !offers(ps.prompt, adapters.ChoiceID(td.Choice)) && td.Choice != approvals.ChoiceAllowAlways {
		return told(fmt.Sprintf("`%s` is not offered for prompt #%d.", adapterTyped(td.Choice), ps.num)), true
	}
	return k.decide(ps, user, starter, approvals.Decision{Choice: td.Choice, Reason: td.Reason}), true
}

// answerValues records the answer to the next unanswered question; when all
// are answered, the question prompt is decided.
func (k *desk) answerValues(ps *promptState, user adapters.User, starter string, values []string) verdict {
	if !k.mayDecide(user.ID, starter) {
		return refusedDecision(ps, starter)
	}
	next := -1
	for i := range ps.questions {
		if _, ok := ps.answers[i]; !ok {
			next = i
			break
		}
	}
	if next < 0 {
		return verdict{}
	}
	q := ps.questions[next]
	ans, err := approvals.ParseAnswer(q, strings.Join(values, ","))
	if err != nil {
		return told("That answer does not fit: " + err.Error())
	}
	ps.answers[next] = ans
	if len(ps.answers) < len(ps.questions) {
		return verdict{note: fmt.Sprintf("Noted “%s” for: %s", ans, q.Text)}
	}
	return k.decide(ps, user, starter, approvals.Decision{Choice: approvals.ChoiceAllow, Answers: ps.answersByText()})
}

// answerAll records answers given with a prompt's controls (one entry per
// question, "" for those left open); when every question has one, the
// prompt is decided.
func (k *desk) answerAll(ps *promptState, user adapters.User, starter string, answers []string) verdict {
	if !k.mayDecide(user.ID, starter) {
		return refusedDecision(ps, starter)
	}
	for i, a := range answers {
		if i >= len(ps.questions) || strings.TrimSpace(a) == "" {
			continue
		}
		ans, err := approvals.ParseAnswer(ps.questions[i], a)
		if err != nil {
			return told("That answer does not fit: " + err.Error())
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
		return told("Still to answer: " + strings.Join(open, "; "))
	}
	return k.decide(ps, user, starter, approvals.Decision{Choice: approvals.ChoiceAllow, Answers: ps.answersByText()})
}

// answersByText are the collected answers keyed by their question's text.
func (ps *promptState) answersByText() map[string]string {
	out := make(map[string]string, len(ps.questions))
	for i, q := range ps.questions {
		out[q.Text] = ps.answers[i]
	}
	return out
}

// refusedDecision: user may not decide ps.
func refusedDecision(ps *promptState, starter string) verdict {
	return verdict{
		refused: []refusal{{ps.id, "not allowed to decide " + ps.prompt.Tool}},
		tell:    fmt.Sprintf("Only %s (who started this thread) or an admin can decide this.", starter),
	}
}

// decide takes user's decision on ps: the first valid one wins, and only
// it comes back as a decision to carry out.
func (k *desk) decide(ps *promptState, user adapters.User, starter string, d approvals.Decision) verdict {
	d.By = user.ID
	d.At = k.now()
	var v verdict
	downgraded := ""
	if d.Choice == approvals.ChoiceAllowAlways && !k.isAdmin(user.ID) && k.mayDecide(user.ID, starter) {
		// A channel rule is for admins; the starter gets the thread grant.
		d.Choice, downgraded = approvals.ChoiceAllow, " (Always allow is for admins: allowed once)"
		if _, ok := ps.grants[approvals.ChoiceAllowThread]; ok {
			d.Choice, downgraded = approvals.ChoiceAllowThread, " (Always allow is for admins: for this thread instead)"
		}
		v.refused = append(v.refused, refusal{ps.id, "allow_always by a non-admin, downgraded to " + string(d.Choice)})
	}
	p, err := k.reg.Decide(ps.id, d)
	if err == nil {
		v.decision = &decision{ps: ps, p: p, d: d, downgraded: downgraded}
		return v
	}
	var already *approvals.AlreadyDecidedError
	switch {
	case errors.Is(err, approvals.ErrNotAllowed):
		r := refusedDecision(ps, starter)
		v.refused, v.tell = append(v.refused, r.refused...), r.tell
	case errors.As(err, &already):
		v.refused = append(v.refused, refusal{ps.id, "already decided"})
		v.tell = "Already decided by " + already.By + "."
	case errors.Is(err, approvals.ErrExpired):
		v.tell = "This request has expired."
	case errors.Is(err, approvals.ErrCancelled):
		v.tell = "This request was cancelled."
	default:
		v.tell = "Could not decide: " + err.Error()
	}
	return v
}
