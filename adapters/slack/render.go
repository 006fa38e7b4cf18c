package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/mdsplit"
	"github.com/claudeops/claudeops/adapters/slack/slackmd"
)

// Limits we render to (SLACK.md §1), with margin.
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
	a.msgMu.Lock()
	a.msgs.put(msgKey(ref), p)
	a.msgMu.Unlock()
	return ref
}

func msgKey(ref adapters.MessageRef) string { return ref.Thread.Channel + "|" + ref.ID }

// errForgotten: an edit of a message forgotten since it was queued
// (msgsCap). It is not retried.
var errForgotten = errors.New("slack: message no longer remembered")

// forget drops ref's entry if it is still p: a message that changes no more.
func (a *Adapter) forget(ref adapters.MessageRef, p *posted) {
	a.msgMu.Lock()
	defer a.msgMu.Unlock()
	if cur, ok := a.msgs.get(msgKey(ref)); ok && cur == p {
		a.msgs.remove(msgKey(ref))
	}
}

func (a *Adapter) lookup(ref adapters.MessageRef) *posted {
	a.msgMu.Lock()
	defer a.msgMu.Unlock()
	p, _ := a.msgs.get(msgKey(ref))
	return p
}

// Post implements adapters.Adapter. It blocks until Slack has the message
// (waiting out rate limits).
func (a *Adapter) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	p := &posted{channel: t.Channel, thread: t.Thread}
	if m.Kind == adapters.KindText && !m.Final && a.streamAllowed() {
		if err := a.startStream(ctx, p, m.Text); err == nil {
			return a.newRef(t, p), nil
		}
	}
	if err := a.render(ctx, p, m); err != nil {
		return adapters.MessageRef{}, err
	}
	return a.newRef(t, p), nil
}

// Edit implements adapters.Adapter. It returns at once: the editor sends
// the latest content of each message, paced, so that a burst of edits costs
// one call and the final version always lands.
func (a *Adapter) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	if a.lookup(ref) == nil {
		return fmt.Errorf("slack: edit of unknown message %s", ref.ID)
	}
	a.edit.set(msgKey(ref), func(ctx context.Context) error { return a.editNow(ctx, ref, m) },
		m.Final || m.Kind == adapters.KindTool && m.Tool != nil && m.Tool.State != adapters.ToolRunning)
	return nil
}

// editNow makes the message show m: what the editor runs.
func (a *Adapter) editNow(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	p := a.lookup(ref)
	if p == nil {
		return errForgotten
	}
	if p.stream {
		return a.appendStream(ctx, p, m)
	}
	return a.render(ctx, p, m)
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
	if m.Kind == adapters.KindTool && m.Tool != nil && m.Tool.State != adapters.ToolRunning && !p.fileSent &&
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
		ts, err := a.postMessage(ctx, p.channel, append(part.options(), slack.MsgOptionTS(p.thread))...)
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

// Tell implements adapters.Teller with an ephemeral message in the thread.
func (a *Adapter) Tell(ctx context.Context, t adapters.ThreadRef, u adapters.User, text string) error {
	s := slackmd.ToMrkdwn(text)
	return a.call(ctx, "chat.postEphemeral", t.Channel, func(ctx context.Context) error {
		_, err := a.api.PostEphemeralContext(ctx, t.Channel, u.ID, slack.MsgOptionText(adapters.Cut(s, 3000), false), slack.MsgOptionTS(t.Thread))
		return err
	})
}

// SetStatus implements adapters.Statuser: Slack's "is thinking…" line. It
// returns at once: the status goes out from the status editor, so a turn's
// prompt reaches Claude without waiting a Slack round trip (or a rate
// limit). Per thread one call is in flight at a time and only the latest
// status waits, so statuses land in the order they were set. A failure is
// logged there, not returned.
func (a *Adapter) SetStatus(_ context.Context, t adapters.ThreadRef, status string) error {
	a.status.set(t.Channel+"|"+t.Thread, func(ctx context.Context) error {
		return a.call(ctx, "assistant.threads.setStatus", t.Channel, func(ctx context.Context) error {
			return a.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: t.Channel, ThreadTS: t.Thread, Status: status})
		})
	}, true)
	return nil
}

// Native streaming (chat.startStream / appendStream / stopStream).

func (a *Adapter) streamAllowed() bool { return atomic.LoadInt32(&a.streamOK) >= 0 }

// startStream opens a native stream showing text. A stream's pieces
// concatenate on Slack's side, so mention syntax is made inert on the text
// as a whole, never per piece: a stream holds Neutralize(Settled(text)),
// and each append sends what that gained (see slackmd.Settled). A "<!he"
// now and "re>" later cannot add up to a live <!here>.
func (a *Adapter) startStream(ctx context.Context, p *posted, text string) error {
	raw := slackmd.Settled(text)
	chunk := slackmd.Neutralize(raw)
	var ts string
	err := a.call(ctx, "chat.startStream", p.channel, func(ctx context.Context) error {
		var err error
		opts := []slack.MsgOption{slack.MsgOptionTS(p.thread)}
		a.msgMu.Lock()
		user, _ := a.asker.get(p.channel + "|" + p.thread)
		a.msgMu.Unlock()
		_, _, team, _ := a.identity()
		if user != "" {
			opts = append(opts, slack.MsgOptionRecipientUserID(user), slack.MsgOptionRecipientTeamID(team))
		}
		if chunk != "" {
			opts = append(opts, slack.MsgOptionMarkdownText(chunk))
		}
		_, ts, err = a.api.StartStreamContext(ctx, p.channel, opts...)
		return err
	})
	if err != nil {
		// Not available in this workspace (or refused): remember, and use
		// chat.update from now on.
		if atomic.SwapInt32(&a.streamOK, -1) != -1 {
			a.log.Info("slack: native streaming unavailable; using chat.update", "err", err)
		}
		return err
	}
	atomic.StoreInt32(&a.streamOK, 1)
	p.ts, p.shown, p.stream, p.streamRaw, p.streamOut = []string{ts}, []string{""}, true, raw, chunk
	// A stream carries no buttons: the Stop control is a small message of
	// its own while the stream is open.
	stop := part{text: "Claude is answering…", blocks: []slack.Block{
		slack.NewActionBlock("live", slack.NewButtonBlockElement(actionStop, string(adapters.ChoiceStop), plainText("Stop")).WithStyle(slack.StyleDanger)),
	}}
	if p.stopTS, err = a.postMessage(ctx, p.channel, append(stop.options(), slack.MsgOptionTS(p.thread))...); err != nil {
		a.log.Warn("slack: post Stop control", "err", err)
	}
	return nil
}

// removeStop deletes the Stop control of a stream that has ended.
func (a *Adapter) removeStop(ctx context.Context, p *posted) {
	if p.stopTS == "" {
		return
	}
	err := a.call(ctx, "chat.delete", p.channel, func(ctx context.Context) error {
		_, _, err := a.api.DeleteMessageContext(ctx, p.channel, p.stopTS)
		return err
	})
	if err != nil {
		a.log.Warn("slack: remove Stop control", "err", err)
		return
	}
	p.stopTS = ""
}

// appendStream sends what the neutralised text gained since the last
// append; a text not final keeps back a tail that may still become a
// mention. A stream holds one part; text beyond it, or text that was
// rewritten rather than extended, ends the stream and goes on as ordinary
// messages.
func (a *Adapter) appendStream(ctx context.Context, p *posted, m adapters.Message) error {
	extended := strings.HasPrefix(m.Text, p.streamRaw)
	fits := utf8.RuneCountInString(slackmd.Neutralize(m.Text)) <= textPartRunes
	if extended && fits {
		raw := m.Text
		if !m.Final {
			raw = slackmd.Settled(raw)
		}
		out := slackmd.Neutralize(raw)
		if !strings.HasPrefix(out, p.streamOut) {
			// Cannot happen (Settled's contract); never send a piece that
			// would not add up to out.
			return fmt.Errorf("slack: stream text %q does not extend what was sent", adapters.Cut(out, 80))
		}
		if delta := out[len(p.streamOut):]; delta != "" {
			err := a.call(ctx, "chat.appendStream", p.channel, func(ctx context.Context) error {
				_, _, err := a.api.AppendStreamContext(ctx, p.channel, p.ts[0], slack.MsgOptionMarkdownText(delta))
				return err
			})
			if err != nil {
				return fmt.Errorf("slack chat.appendStream: %w", err)
			}
			p.streamRaw, p.streamOut = raw, out
		}
		if !m.Final {
			return nil
		}
	}
	err := a.call(ctx, "chat.stopStream", p.channel, func(ctx context.Context) error {
		_, _, err := a.api.StopStreamContext(ctx, p.channel, p.ts[0])
		return err
	})
	if err != nil {
		return fmt.Errorf("slack chat.stopStream: %w", err)
	}
	p.stream = false
	a.removeStop(ctx, p)
	if extended && fits {
		p.shown[0] = "streamed"
		return nil
	}
	// The rest (or a rewrite) continues as ordinary parts after the streamed one.
	if !extended {
		p.shown[0] = "" // rewrite part 0 in full
		return a.render(ctx, p, m)
	}
	rest := m
	rest.Text = m.Text[len(p.streamRaw):]
	tail := &posted{channel: p.channel, thread: p.thread}
	if err := a.render(ctx, tail, rest); err != nil {
		return err
	}
	p.ts = append(p.ts, tail.ts...)
	p.shown = append(p.shown, tail.shown...)
	return nil
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
