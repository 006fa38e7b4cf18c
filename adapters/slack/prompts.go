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
// the request and its buttons.
func (a *Adapter) Ask(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt) (adapters.MessageRef, error) {
	pm := &posted{channel: t.Channel, thread: t.Thread}
	if err := a.renderPrompt(ctx, pm, p); err != nil {
		return adapters.MessageRef{}, err
	}
	return a.newRef(t, pm), nil
}

// UpdatePrompt implements adapters.Adapter: the prompt says who decided
// what, and its controls are removed.
func (a *Adapter) UpdatePrompt(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error {
	pm := a.lookup(ref)
	if pm == nil {
		// A prompt from before a restart: its message ts is the ref id.
		pm = &posted{channel: ref.Thread.Channel, thread: ref.Thread.Thread, ts: []string{ref.ID}, shown: []string{""}}
	}
	a.edit.set(msgKey(ref), func(ctx context.Context) error { return a.renderPrompt(ctx, pm, p) }, true)
	return nil
}

func (a *Adapter) renderPrompt(ctx context.Context, pm *posted, p adapters.Prompt) error {
	return a.show(ctx, pm, []part{{text: adapters.Cut(escapeMrkdwn(p.Title), fallbackRunes), blocks: promptBlocks(p)}})
}

func promptBlocks(p adapters.Prompt) []slack.Block {
	pending := p.State == adapters.PromptPending
	var blocks []slack.Block
	if p.Kind == adapters.PromptApproval {
		blocks = append(blocks, slack.NewSectionBlock(mdText(adapters.Cut("*"+escapeMrkdwn(p.Title)+"*", sectionTextRunes)), nil, nil))
		if p.Detail != "" {
			detail := strings.ReplaceAll(p.Detail, "```", "ˋˋˋ")
			if len([]rune(detail)) > sectionTextRunes-40 {
				detail = adapters.Cut(detail, sectionTextRunes-80) + "\n(shortened here; the full input is recorded)"
			}
			blocks = append(blocks, slack.NewSectionBlock(mdText("```"+escapeMrkdwn(detail)+"```"), nil, nil))
		}
		if pending {
			var els []slack.BlockElement
			for _, c := range p.Choices {
				b := slack.NewButtonBlockElement(actionApproval+c.ID, p.ID, plainText(c.Label))
				switch c.ID {
				case "allow":
					b = b.WithStyle(slack.StylePrimary)
				case "deny":
					b = b.WithStyle(slack.StyleDanger)
				}
				els = append(els, b)
			}
			blocks = append(blocks,
				slack.NewActionBlock("approval:"+adapters.Cut(p.ID, 200), els...),
				slack.NewContextBlock("", mdText("To deny with a reason, reply `deny <reason>` in this thread.")))
		}
	} else {
		anyMulti := false
		for qi, q := range p.Questions {
			head := "*" + escapeMrkdwn(q.Text) + "*"
			if q.Header != "" {
				head = "`" + escapeMrkdwn(q.Header) + "` " + head
			}
			var lines []string
			for oi, o := range q.Options {
				l := fmt.Sprintf("%d. %s", oi+1, escapeMrkdwn(o.Label))
				if o.Description != "" {
					l += " — " + escapeMrkdwn(o.Description)
				}
				lines = append(lines, l)
			}
			blocks = append(blocks, slack.NewSectionBlock(mdText(adapters.Cut(head+"\n"+strings.Join(lines, "\n"), sectionTextRunes)), nil, nil))
			if !pending {
				continue
			}
			bid := fmt.Sprintf("question:%d:%s", qi, adapters.Cut(p.ID, 200))
			switch {
			case q.Multi:
				anyMulti = true
				var opts []*slack.OptionBlockObject
				for oi, o := range q.Options {
					opts = append(opts, slack.NewOptionBlockObject(strconv.Itoa(oi+1), plainText(adapters.Cut(o.Label, 75)), nil))
				}
				blocks = append(blocks, slack.NewActionBlock(bid, slack.NewCheckboxGroupsBlockElement(actionCheck+strconv.Itoa(qi), opts[:min(len(opts), 10)]...)))
			case len(q.Options) <= maxButtons:
				var els []slack.BlockElement
				for oi, o := range q.Options {
					els = append(els, slack.NewButtonBlockElement(fmt.Sprintf("%s%d_%d", actionAnswer, qi, oi+1), p.ID, plainText(adapters.Cut(o.Label, 75))))
				}
				blocks = append(blocks, slack.NewActionBlock(bid, els...))
			default:
				var opts []*slack.OptionBlockObject
				for oi, o := range q.Options {
					opts = append(opts, slack.NewOptionBlockObject(strconv.Itoa(oi+1), plainText(adapters.Cut(o.Label, 75)), nil))
				}
				blocks = append(blocks, slack.NewActionBlock(bid, slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plainText("Choose"), actionSelect+strconv.Itoa(qi), opts[:min(len(opts), 100)]...)))
			}
		}
		if pending {
			if anyMulti || len(p.Questions) > 1 {
				blocks = append(blocks, slack.NewActionBlock("submit:"+adapters.Cut(p.ID, 200),
					slack.NewButtonBlockElement(actionSubmit, p.ID, plainText("Submit")).WithStyle(slack.StylePrimary)))
			}
			blocks = append(blocks, slack.NewContextBlock("", mdText("Or reply in this thread with the option number(s), or your own answer.")))
		}
	}
	if !pending && p.Outcome != "" {
		blocks = append(blocks, slack.NewContextBlock("", mdText(adapters.Cut(slackmd.ToMrkdwn(p.Outcome), contextTextRunes))))
	}
	return blocks
}

// actionEvent turns one block action into an event; ok is false for
// actions that only change state (ticking a checkbox).
func actionEvent(base adapters.Event, act *slack.BlockAction, state slack.BlockActionStates) (adapters.Event, bool) {
	ev := base
	id := act.ActionID
	switch {
	case id == actionStop:
		ev.Choice = "stop"
		return ev, true
	case strings.HasPrefix(id, actionApproval):
		ev.PromptID, ev.Choice = act.Value, strings.TrimPrefix(id, actionApproval)
		return ev, true
	case strings.HasPrefix(id, actionAnswer):
		qi, oi, ok := strings.Cut(strings.TrimPrefix(id, actionAnswer), "_")
		q, err := strconv.Atoi(qi)
		if !ok || err != nil || q < 0 || q > 16 {
			return ev, false
		}
		ev.PromptID, ev.Choice = act.Value, "answer"
		ev.Answers = make([]string, q+1)
		ev.Answers[q] = oi
		return ev, true
	case strings.HasPrefix(id, actionSelect):
		q, err := strconv.Atoi(strings.TrimPrefix(id, actionSelect))
		if err != nil || q < 0 || q > 16 {
			return ev, false
		}
		ev.PromptID, ev.Choice = promptIDFromBlock(act.BlockID), "answer"
		ev.Answers = make([]string, q+1)
		ev.Answers[q] = act.SelectedOption.Value
		return ev, true
	case id == actionSubmit:
		ev.PromptID, ev.Choice = act.Value, "answer"
		for bid, acts := range state.Values {
			if promptIDFromBlock(bid) != ev.PromptID {
				continue
			}
			for aid, st := range acts {
				var q int
				var val string
				switch {
				case strings.HasPrefix(aid, actionCheck):
					q, _ = strconv.Atoi(strings.TrimPrefix(aid, actionCheck))
					var vals []string
					for _, o := range st.SelectedOptions {
						vals = append(vals, o.Value)
					}
					val = strings.Join(vals, ",")
				case strings.HasPrefix(aid, actionSelect):
					q, _ = strconv.Atoi(strings.TrimPrefix(aid, actionSelect))
					val = st.SelectedOption.Value
				default:
					continue
				}
				if q < 0 || q > 16 {
					continue
				}
				for len(ev.Answers) <= q {
					ev.Answers = append(ev.Answers, "")
				}
				ev.Answers[q] = val
			}
		}
		return ev, true
	}
	return ev, false
}

// promptIDFromBlock reads the prompt id from "question:<qi>:<id>".
func promptIDFromBlock(blockID string) string {
	parts := strings.SplitN(blockID, ":", 3)
	if len(parts) == 3 && parts[0] == "question" {
		return parts[2]
	}
	return ""
}
