package matrix

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// approvalKeys are the reactions of the approval choices, by choice id.
var approvalKeys = map[adapters.ChoiceID]string{
	adapters.ChoiceAllow:       "✅",
	adapters.ChoiceAllowThread: "🧵",
	adapters.ChoiceAllowFolder: "📂",
	adapters.ChoiceAllowAlways: "♾️",
	adapters.ChoiceDeny:        "❌",
}

// keycaps are the reactions that pick a question's option.
var keycaps = []string{"1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣", "🔟"}

// promptMsg is a prompt the bot showed: its message, its polls, and the
// reactions the bot added (redacted once it is decided).
type promptMsg struct {
	id     string // the bot's prompt id, all a click carries back
	kind   adapters.PromptKind
	thread adapters.ThreadRef
	event  id.EventID
	nq     int
	// keycapQ is the question keycap reactions on the prompt answer, or -1.
	keycapQ int
	polls   map[id.EventID]int // poll event → question index
	// choices are the ids of the approval choices offered: only their
	// reactions count.
	choices []adapters.ChoiceID
	own     []id.EventID // the bot's reactions
	closed  bool
}

// reactionClick turns a reaction key on target into a click.
func (p *promptMsg) reactionClick(key string, target id.EventID) (adapters.Click, bool) {
	c := adapters.Click{PromptID: p.id}
	if p.kind == adapters.PromptApproval {
		for _, ch := range p.choices {
			if k, ok := approvalKeys[ch]; ok && cleanKey(k) == key {
				c.Choice = ch
				return c, true
			}
		}
		return c, false
	}
	if target != p.event || p.keycapQ < 0 {
		return c, false
	}
	for i, k := range keycaps {
		if cleanKey(k) == key {
			c.Choice = adapters.ChoiceAnswer
			c.Answers = make([]string, p.nq)
			c.Answers[p.keycapQ] = strconv.Itoa(i + 1)
			return c, true
		}
	}
	return c, false
}

// voteClick turns a poll response into an answer of the poll's question.
func (p *promptMsg) voteClick(poll id.EventID, answers []string) (adapters.Click, bool) {
	q, ok := p.polls[poll]
	if !ok || len(answers) == 0 {
		return adapters.Click{}, false
	}
	var nums []string
	for _, a := range answers {
		if n, err := strconv.Atoi(strings.TrimPrefix(a, "o")); err == nil && n > 0 {
			nums = append(nums, strconv.Itoa(n))
		}
	}
	if len(nums) == 0 {
		return adapters.Click{}, false
	}
	c := adapters.Click{PromptID: p.id, Choice: adapters.ChoiceAnswer, Answers: make([]string, p.nq)}
	c.Answers[q] = strings.Join(nums, ",")
	return c, true
}

// Ask implements adapters.Adapter: the prompt as a notice in the thread,
// registered before the bot adds its reactions (a click may come at once),
// then for questions one poll per single-choice question. A detail too
// long for the notice goes up whole as a file first; if that fails,
// nothing is posted and Ask fails (the bot then denies: nobody decides on
// a part).
func (d *direct) Ask(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt) (adapters.MessageRef, error) {
	a := (*Adapter)(d)
	md, cut := promptView(p)
	if cut {
		if err := a.sendFile(ctx, t, adapters.InputFileName(p.Tool), textMime, []byte(p.Detail)); err != nil {
			return adapters.MessageRef{}, fmt.Errorf("matrix: the whole input could not be attached, so the prompt is not shown: %w", err)
		}
	}
	a.closeStatus(t)
	room := id.RoomID(t.Channel)
	evID, err := a.sendInThread(ctx, t, content(md))
	if err != nil {
		return adapters.MessageRef{}, fmt.Errorf("matrix: post prompt: %w", err)
	}
	pm, keys := newPromptMsg(p, t, evID)
	a.mu.Lock()
	a.prompts[evID] = pm
	a.prunePrompts()
	a.mu.Unlock()
	if p.Kind == adapters.PromptQuestion {
		a.addPolls(ctx, t, p, pm)
	}
	for _, k := range keys {
		resp, err := a.cli.SendReaction(ctx, room, evID, k)
		if err != nil {
			a.log.Warn("matrix: pre-add reaction", "key", k, "err", err)
			continue
		}
		a.mu.Lock()
		pm.own = append(pm.own, resp.EventID)
		a.mu.Unlock()
	}
	return adapters.MessageRef{Thread: t, ID: evID.String()}, nil
}

// newPromptMsg is the record of prompt p posted as evID, and the reactions
// the bot adds to it: one per offered approval choice, or the keycaps of a
// single question's options.
func newPromptMsg(p adapters.Prompt, t adapters.ThreadRef, evID id.EventID) (*promptMsg, []string) {
	pm := &promptMsg{id: p.ID, kind: p.Kind, thread: t, event: evID, nq: len(p.Questions), keycapQ: -1, polls: map[id.EventID]int{}}
	var keys []string
	if p.Kind == adapters.PromptApproval {
		for _, c := range p.Choices {
			if k, ok := approvalKeys[c.ID]; ok {
				pm.choices = append(pm.choices, c.ID)
				keys = append(keys, k)
			}
		}
		return pm, keys
	}
	if len(p.Questions) == 1 && !p.Questions[0].Multi && len(p.Questions[0].Options) <= len(keycaps) {
		pm.keycapQ = 0
		keys = keycaps[:len(p.Questions[0].Options)]
	}
	return pm, keys
}

// addPolls posts a poll for each single-choice question of p.
func (a *Adapter) addPolls(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt, pm *promptMsg) {
	for i, q := range p.Questions {
		if q.Multi || len(q.Options) == 0 {
			continue // answered by typing the numbers: a vote is final at once
		}
		poll, err := a.sendPoll(ctx, t, q)
		if err != nil {
			a.log.Warn("matrix: post poll", "err", err)
			continue
		}
		a.mu.Lock()
		pm.polls[poll] = i
		a.prompts[poll] = pm
		a.mu.Unlock()
	}
}

func (a *Adapter) sendPoll(ctx context.Context, t adapters.ThreadRef, q adapters.Question) (id.EventID, error) {
	start := event.PollStart{Kind: "org.matrix.msc3381.poll.disclosed", MaxSelections: 1, Question: event.MSC1767Message{Text: q.Text}}
	fallback := q.Text
	for i, o := range q.Options {
		label := o.Label
		start.Answers = append(start.Answers, event.PollOption{ID: "o" + strconv.Itoa(i+1), MSC1767Message: event.MSC1767Message{Text: label}})
		fallback += fmt.Sprintf("\n%d. %s", i+1, label)
	}
	c := &event.Content{
		Parsed: &event.PollStartEventContent{
			RelatesTo: a.threadRelation(t),
			Mentions:  &event.Mentions{},
			PollStart: start,
		},
		Raw: map[string]any{"org.matrix.msc1767.text": fallback},
	}
	resp, err := a.cli.SendMessageEvent(ctx, id.RoomID(t.Channel), event.EventUnstablePollStart, c)
	if err != nil {
		return "", err
	}
	a.seenInThread(t, resp.EventID)
	return resp.EventID, nil
}

// UpdatePrompt implements adapters.Adapter: the prompt is edited to say who
// decided what; the bot's reactions are withdrawn and its polls ended.
func (d *direct) UpdatePrompt(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error {
	a := (*Adapter)(d)
	room := id.RoomID(ref.Thread.Channel)
	evID := id.EventID(ref.ID)
	a.mu.Lock()
	pm := a.prompts[evID]
	var own []id.EventID
	var polls []id.EventID
	if pm != nil && !pm.closed {
		pm.closed = p.State != adapters.PromptPending
		own = append(own, pm.own...)
		for poll := range pm.polls {
			polls = append(polls, poll)
		}
	}
	a.mu.Unlock()
	a.setEdit(room, ref.Thread.Key(), evID, content(promptMarkdown(p)), p.State != adapters.PromptPending)
	if p.State == adapters.PromptPending {
		return nil
	}
	if pm == nil {
		own = a.ownReactions(ctx, room, evID) // a prompt from before a restart
	}
	for _, r := range own {
		if _, err := a.cli.RedactEvent(ctx, room, r, mautrix.ReqRedact{Reason: "decided"}); err != nil {
			a.log.Warn("matrix: withdraw reaction", "err", err)
		}
	}
	for _, poll := range polls {
		end := &event.Content{Raw: map[string]any{
			"m.relates_to":                map[string]any{"rel_type": "m.reference", "event_id": poll.String()},
			"org.matrix.msc3381.poll.end": map[string]any{},
			"org.matrix.msc1767.text":     "The poll has ended. " + p.Outcome,
			"m.mentions":                  map[string]any{},
		}}
		if _, err := a.cli.SendMessageEvent(ctx, room, event.EventUnstablePollEnd, end); err != nil {
			a.log.Warn("matrix: end poll", "err", err)
		}
	}
	return nil
}

// ownReactions finds the bot's reactions on an event through the relations
// API (for prompts shown before a restart).
func (a *Adapter) ownReactions(ctx context.Context, room id.RoomID, evID id.EventID) []id.EventID {
	resp, err := a.cli.GetRelations(ctx, room, evID, &mautrix.ReqGetRelations{RelationType: event.RelAnnotation, EventType: event.EventReaction, Limit: 50})
	if err != nil {
		a.log.Debug("matrix: list reactions", "err", err)
		return nil
	}
	var out []id.EventID
	for _, e := range resp.Chunk {
		if e.Sender == a.me {
			out = append(out, e.ID)
		}
	}
	return out
}
