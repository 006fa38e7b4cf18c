package slack

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/mdsplit"
	"github.com/claudeops/claudeops/adapters/slack/slackmd"
)

// Limits we render to (Slack's block and message limits), with margin.
const (
	textPartRunes    = 11000 // markdown blocks: 12,000 cumulative per message
	sectionTextRunes = 2900  // section text: 3,000
	contextTextRunes = 1900
	fallbackRunes    = 300 // the notification text
	fileOutputRunes  = 1500
)

// posted is one message the bot showed, possibly several Slack messages
// (a long text is split into parts).
type posted struct {
	channel, thread string
	ts              []string
	shown           []string // what each part shows now
	stream          bool     // part 0 is a native stream still open
	native          bool     // posted as a native stream (set once, before the ref is out)
	streamRaw       string   // the text whose neutralised form the stream holds
	streamOut       string   // what was sent to the stream: Neutralize(streamRaw)
	stopTS          string   // the Stop control shown beside an open stream
	fileSent        bool     // a tool's long output went up as a file
	input           upload   // where a tool's long input went
}

// newRef names a posted message by the ts of its first Slack message: a
// ref stays valid across restarts (prompts are updated after one).
func (a *Adapter) newRef(t adapters.ThreadRef, p *posted) adapters.MessageRef {
	ref := adapters.MessageRef{Thread: t, ID: p.ts[0]}
	a.msgs.Put(msgKey(ref), p)
	return ref
}

func msgKey(ref adapters.MessageRef) string { return ref.Thread.Channel + "|" + ref.ID }

// threadKey names a thread in the adapter's maps and editors.
func threadKey(channel, thread string) string { return channel + "|" + thread }

func refThread(ref adapters.MessageRef) string {
	return threadKey(ref.Thread.Channel, ref.Thread.Thread)
}

// errForgotten: an edit of a message forgotten since it was queued
// (msgsCap). It is not retried.
var errForgotten = errors.New("slack: message no longer remembered")

// forget drops ref's entry if it is still p: a message that changes no more.
func (a *Adapter) forget(ref adapters.MessageRef, p *posted) {
	a.msgs.RemoveIf(msgKey(ref), func(cur *posted) bool { return cur == p })
}

func (a *Adapter) lookup(ref adapters.MessageRef) *posted {
	p, _ := a.msgs.Get(msgKey(ref))
	return p
}

// Post implements adapters.Adapter. It blocks until Slack has the message
// (waiting out rate limits).
func (d *direct) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	a := (*Adapter)(d)
	if t.Thread == "" {
		return adapters.MessageRef{}, errNoThread
	}
	if m.Kind == adapters.KindFooter {
		if ref, ok := a.footerInHeld(ctx, t, m); ok {
			return ref, nil
		}
	}
	a.flushThread(ctx, t)
	p := &posted{channel: t.Channel, thread: t.Thread}
	if m.Kind == adapters.KindFooter {
		if ts := a.takeSpare(t.Channel, t.Thread); ts != "" {
			// The ended stream's Stop control becomes the footer.
			spare := &posted{channel: t.Channel, thread: t.Thread, ts: []string{ts}, shown: []string{""}}
			if err := a.render(ctx, spare, m); err == nil {
				return a.postedRef(t, spare), nil
			}
			a.deleteMessage(ctx, t.Channel, ts)
		}
	}
	if m.Kind == adapters.KindText && !m.Final && a.streamAllowed() {
		if err := a.startStream(ctx, p, m.Text); err == nil {
			return a.postedRef(t, p), nil
		}
	}
	if err := a.render(ctx, p, m); err != nil {
		return adapters.MessageRef{}, err
	}
	return a.postedRef(t, p), nil
}

// postedRef is newRef for a message Post just made: the post counts as a
// send for the editor's pacing, so the first live edit waits an interval
// after it instead of following it at once (one call fewer per turn).
func (a *Adapter) postedRef(t adapters.ThreadRef, p *posted) adapters.MessageRef {
	ref := a.newRef(t, p)
	a.edit.Posted(refThread(ref), msgKey(ref))
	return ref
}

// render brings a posted message to show m. A tool's long input goes up
// as a file once, before its line first shows (which then points to it).
func (a *Adapter) render(ctx context.Context, p *posted, m adapters.Message) error {
	if m.Kind == adapters.KindTool && p.input == uploadNone && longInput(m.Tool) {
		p.input = a.uploadInput(ctx, p, m.Tool)
	}
	if err := a.show(ctx, p, a.compose(m, p.input)); err != nil {
		return err
	}
	if m.Kind == adapters.KindTool && m.Tool != nil && m.Tool.State.Done() && !p.fileSent &&
		utf8.RuneCountInString(m.Tool.Output) > fileOutputRunes {
		p.fileSent = true
		a.uploadOutput(ctx, p, m.Tool)
	}
	return nil
}

// show makes the Slack messages of p show parts: each part is updated
// where it changed, posted where it is new.
func (a *Adapter) show(ctx context.Context, p *posted, parts []part) error {
	for i, part := range parts {
		key := part.key()
		if i < len(p.ts) {
			if p.shown[i] == key {
				continue
			}
			err := a.call(ctx, "chat.update", p.channel, func(ctx context.Context) error {
				_, _, _, err := a.api.UpdateMessageContext(ctx, p.channel, p.ts[i], part.options()...)
				return err
			})
			if err != nil {
				return fmt.Errorf("slack chat.update: %w", err)
			}
			p.shown[i] = key
			continue
		}
		ts, err := a.reply(ctx, p.channel, p.thread, part.options()...)
		if err != nil {
			return err
		}
		p.ts = append(p.ts, ts)
		p.shown = append(p.shown, key)
	}
	return nil
}

// postMessage posts a message with link and media previews off: Slack
// would otherwise fetch every URL the model wrote and show what the page
// says about itself under the bot's name. chat.postMessage is the only
// method the bot uses that takes unfurl_links/unfurl_media; an update
// keeps what the post set.
func (a *Adapter) postMessage(ctx context.Context, channel string, opts ...slack.MsgOption) (string, error) {
	opts = append(opts, slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
	var ts string
	err := a.call(ctx, "chat.postMessage", channel, func(ctx context.Context) error {
		var err error
		_, ts, err = a.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack chat.postMessage: %w", err)
	}
	return ts, nil
}

// reply posts a message in a thread (see postMessage).
func (a *Adapter) reply(ctx context.Context, channel, thread string, opts ...slack.MsgOption) (string, error) {
	if thread == "" {
		return "", errNoThread
	}
	// A spare Stop control left above a message that is not the footer
	// would show a dead button mid-thread.
	a.deleteMessage(ctx, channel, a.takeSpare(channel, thread))
	done := a.replying(ctx, channel, thread)
	ts, err := a.postMessage(ctx, channel, append(opts, slack.MsgOptionTS(thread))...)
	if err == nil {
		done()
	}
	return ts, err
}

// part is one Slack message's content.
type part struct {
	text   string // fallback / notification text (mrkdwn)
	blocks []slack.Block
}

func (p part) options() []slack.MsgOption {
	return []slack.MsgOption{slack.MsgOptionText(p.text, false), slack.MsgOptionBlocks(p.blocks...)}
}

func (p part) key() string {
	b, _ := slack.Blocks{BlockSet: p.blocks}.MarshalJSON()
	return p.text + "\x00" + string(b)
}

func mdText(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func plainText(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// compose lays a message out as Slack messages; input says where a tool's
// long input went.
func (a *Adapter) compose(m adapters.Message, input upload) []part {
	switch m.Kind {
	case adapters.KindText:
		// Made inert first, then split: inert mentions are a character
		// longer, and each part must fit as sent.
		chunks := mdsplit.Split(slackmd.Neutralize(m.Text), textPartRunes)
		if len(chunks) == 0 {
			chunks = []string{" "}
		}
		parts := make([]part, len(chunks))
		for i, c := range chunks {
			parts[i] = part{
				text:   slackmd.ToMrkdwn(adapters.Cut(c, fallbackRunes)),
				blocks: []slack.Block{slack.NewMarkdownBlock("", c)},
			}
		}
		if !m.Final {
			last := &parts[len(parts)-1]
			last.blocks = append(last.blocks, slack.NewActionBlock("live",
				slack.NewButtonBlockElement(actionStop, string(adapters.ChoiceStop), plainText("Stop")).WithStyle(slack.StyleDanger)))
		}
		return parts
	case adapters.KindTool:
		return toolParts(m.Tool, input)
	case adapters.KindFooter:
		s := slackmd.ToMrkdwn(m.Text)
		return []part{{text: s, blocks: []slack.Block{slack.NewContextBlock("", mdText(adapters.Cut(s, contextTextRunes)))}}}
	default: // notices
		md := slackmd.ToMrkdwn(m.Text)
		var parts []part
		for _, c := range mdsplit.Split(md, sectionTextRunes) {
			parts = append(parts, part{text: adapters.Cut(c, fallbackRunes), blocks: []slack.Block{slack.NewSectionBlock(mdText(c), nil, nil)}})
		}
		return parts
	}
}

// Tell implements adapters.Teller with an ephemeral message in the thread
// (in the channel, for a thread not yet open: tellInChannel).
func (a *Adapter) Tell(ctx context.Context, t adapters.ThreadRef, u adapters.User, text string) error {
	s := slackmd.ToMrkdwn(text)
	if t.Thread == "" {
		return a.tellInChannel(ctx, t.Channel, u, adapters.Cut(s, 3000))
	}
	return a.call(ctx, "chat.postEphemeral", t.Channel, func(ctx context.Context) error {
		_, err := a.api.PostEphemeralContext(ctx, t.Channel, u.ID, slack.MsgOptionText(adapters.Cut(s, 3000), false), slack.MsgOptionTS(t.Thread))
		return err
	})
}

// OpenThread implements adapters.Opener: a top-level message in the channel
// whose thread the scheduled run then uses.
func (a *Adapter) OpenThread(ctx context.Context, channel string, m adapters.Message) (adapters.ThreadRef, error) {
	parts := a.compose(m, uploadNone)
	ts, err := a.postMessage(ctx, channel, parts[0].options()...)
	if err != nil {
		return adapters.ThreadRef{}, fmt.Errorf("slack open thread: %w", err)
	}
	return adapters.ThreadRef{Platform: Platform, Channel: channel, Thread: ts}, nil
}
