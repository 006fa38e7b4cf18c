package slack

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack/slackmd"
)

// Action ids. A click carries only the action id and the prompt's opaque id
// (the button's value): everything else is looked up by the bot.
const (
	actionStop     = "claudeops_stop"
	actionApproval = "claudeops_approval_" // + choice id
	actionAnswer   = "claudeops_answer_"   // + question index + "_" + option index (buttons)
	actionSelect   = "claudeops_select_"   // + question index (static select)
	actionCheck    = "claudeops_check_"    // + question index (checkboxes)
	actionSubmit   = "claudeops_submit"
)

// maxButtons: up to this many options show as buttons, more as a select.
const maxButtons = 5

// Ask implements adapters.Adapter: an ordinary message in the thread with
// the request and its buttons. A detail too long for the message goes up
// whole as a file first; if that fails, nothing is posted and Ask fails
// (the bot then denies: nobody decides on a part).
func (d *direct) Ask(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt) (adapters.MessageRef, error) {
	a := (*Adapter)(d)
	a.flushThread(ctx, t)
	pm := &posted{channel: t.Channel, thread: t.Thread}
	if _, cut := detailView(p); cut {
		if err := a.uploadText(ctx, t.Channel, t.Thread, adapters.InputFileName(p.Tool), p.Tool+" input (whole)", p.Detail); err != nil {
			return adapters.MessageRef{}, fmt.Errorf("slack: the whole input could not be uploaded, so the prompt is not shown: %w", err)
		}
	}
	if err := a.renderPrompt(ctx, pm, p); err != nil {
		return adapters.MessageRef{}, err
	}
	a.prompts.Put(p.ID, promptLoc{thread: t, ts: pm.ts[0]})
	return a.newRef(t, pm), nil
}

// UpdatePrompt implements adapters.Adapter: the prompt says who decided
// what, and its controls are removed.
func (d *direct) UpdatePrompt(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error {
	a := (*Adapter)(d)
	pm := a.lookup(ref)
	if pm == nil {
		// A prompt from before a restart: its message ts is the ref id.
		pm = &posted{channel: ref.Thread.Channel, thread: ref.Thread.Thread, ts: []string{ref.ID}, shown: []string{""}}
	}
	decided := p.State != adapters.PromptPending
	if decided {
		a.prompts.Remove(p.ID)
	}
	a.edit.Set(refThread(ref), msgKey(ref), pendingEdit{apply: func(ctx context.Context) error {
		err := a.renderPrompt(ctx, pm, p)
		if decided && err == nil {
			// Final: a later update of it starts from its ref, as after a
			// restart; a click on it is answered by the bot (not open).
			a.forget(ref, pm)
		}
		return err
	}}, true)
	return nil
}

func (a *Adapter) renderPrompt(ctx context.Context, pm *posted, p adapters.Prompt) error {
	return a.show(ctx, pm, []part{{text: adapters.Cut(slackmd.Text(p.Title), fallbackRunes), blocks: promptBlocks(p)}})
}

// promptLoc is where an open prompt's controls are.
type promptLoc struct {
	thread adapters.ThreadRef
	ts     string // the prompt's message
}

// fromPrompt checks that a click naming a prompt came from that prompt's
// message. Slack says which channel and message a click was on, the
// button's value which prompt it decides: unless they agree, a payload
// made elsewhere (another channel's message naming this prompt's id)
// could decide a prompt its sender never saw. A prompt this run did not
// post is left to the bot, for which it is not open.
func (a *Adapter) fromPrompt(ev *adapters.Event, cb slack.InteractionCallback) bool {
	if ev.Click.PromptID == "" {
		return true
	}
	loc, ok := a.prompts.Get(ev.Click.PromptID)
	if !ok {
		return true
	}
	ch := loc.thread.Channel
	if cb.Container.ChannelID != ch || cb.Container.MessageTs != loc.ts || cb.Channel.ID != "" && cb.Channel.ID != ch {
		return false
	}
	ev.Thread = loc.thread
	return true
}

// actionClick turns one block action into a click; ok is false for
// actions that only change state (ticking a checkbox).
func actionClick(act *slack.BlockAction, state slack.BlockActionStates) (c adapters.Click, ok bool) {
	id := act.ActionID
	switch {
	case id == actionStop:
		c.Choice = adapters.ChoiceStop
		return c, true
	case strings.HasPrefix(id, actionApproval):
		c.PromptID, c.Choice = act.Value, adapters.ChoiceID(strings.TrimPrefix(id, actionApproval))
		return c, true
	case strings.HasPrefix(id, actionAnswer):
		qi, oi, ok := strings.Cut(strings.TrimPrefix(id, actionAnswer), "_")
		q, err := strconv.Atoi(qi)
		if !ok || err != nil || q < 0 || q > 16 {
			return c, false
		}
		c.PromptID, c.Choice = act.Value, adapters.ChoiceAnswer
		c.Answers = make([]string, q+1)
		c.Answers[q] = oi
		return c, true
	case strings.HasPrefix(id, actionSelect):
		q, err := strconv.Atoi(strings.TrimPrefix(id, actionSelect))
		if err != nil || q < 0 || q > 16 {
			return c, false
		}
		c.PromptID, c.Choice = promptIDFromBlock(act.BlockID), adapters.ChoiceAnswer
		c.Answers = make([]string, q+1)
		c.Answers[q] = act.SelectedOption.Value
		return c, true
	case id == actionSubmit:
		c.PromptID, c.Choice = act.Value, adapters.ChoiceAnswer
		c.Answers = stateAnswers(state, c.PromptID)
		return c, true
	}
	return c, false
}

// stateAnswers reads the answers of a prompt's questions from the state
// of its selects and checkboxes: one entry per question, "" where none.
func stateAnswers(state slack.BlockActionStates, promptID string) []string {
	var answers []string
	for bid, acts := range state.Values {
		if promptIDFromBlock(bid) != promptID {
			continue
		}
		for aid, st := range acts {
			q, val, ok := stateAnswer(aid, st)
			if !ok {
				continue
			}
			for len(answers) <= q {
				answers = append(answers, "")
			}
			answers[q] = val
		}
	}
	return answers
}

// stateAnswer is one question's answer in a select's or checkboxes' state.
func stateAnswer(actionID string, st slack.BlockAction) (q int, val string, ok bool) {
	var err error
	switch {
	case strings.HasPrefix(actionID, actionCheck):
		q, err = strconv.Atoi(strings.TrimPrefix(actionID, actionCheck))
		var vals []string
		for _, o := range st.SelectedOptions {
			vals = append(vals, o.Value)
		}
		val = strings.Join(vals, ",")
	case strings.HasPrefix(actionID, actionSelect):
		q, err = strconv.Atoi(strings.TrimPrefix(actionID, actionSelect))
		val = st.SelectedOption.Value
	default:
		return 0, "", false
	}
	return q, val, err == nil && q >= 0 && q <= 16
}

// promptIDFromBlock reads the prompt id from "question:<qi>:<id>".
func promptIDFromBlock(blockID string) string {
	parts := strings.SplitN(blockID, ":", 3)
	if len(parts) == 3 && parts[0] == "question" {
		return parts[2]
	}
	return ""
}
