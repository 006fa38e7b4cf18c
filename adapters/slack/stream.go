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
	"github.com/claudeops/claudeops/adapters/slack/slackmd"
)

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
	done := a.replying(ctx, p.channel, p.thread)
	// chat.startStream is Tier 2 for the whole workspace: when its budget
	// is spent the answer goes out as a message and paced updates rather
	// than waiting for it (the caller falls back on errNoBudget).
	err := a.tryCall(ctx, "chat.startStream", p.channel, func(ctx context.Context) error {
		var err error
		opts := []slack.MsgOption{slack.MsgOptionTS(p.thread)}
		user, _ := a.asker.Get(threadKey(p.channel, p.thread))
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
	if errors.Is(err, errNoBudget) {
		return err
	}
	if err != nil {
		// Not available in this workspace (or refused): remember, and use
		// chat.update from now on.
		if atomic.SwapInt32(&a.streamOK, -1) != -1 {
			a.log.Info("slack: native streaming unavailable; using chat.update", "err", err)
		}
		return err
	}
	done()
	atomic.StoreInt32(&a.streamOK, 1)
	p.ts, p.shown, p.stream, p.native, p.streamRaw, p.streamOut = []string{ts}, []string{""}, true, true, raw, chunk
	// A stream carries no buttons: the Stop control is a small message of
	// its own while the stream is open.
	stop := part{text: "Claude is answering…", blocks: []slack.Block{
		slack.NewActionBlock("live", slack.NewButtonBlockElement(actionStop, string(adapters.ChoiceStop), plainText("Stop")).WithStyle(slack.StyleDanger)),
	}}
	if p.stopTS, err = a.reply(ctx, p.channel, p.thread, stop.options()...); err != nil {
		a.log.Warn("slack: post Stop control", "err", err)
	}
	return nil
}

// removeStop deletes the Stop control of a stream that has ended.
func (a *Adapter) removeStop(ctx context.Context, p *posted) {
	if p.stopTS != "" && a.deleteMessage(ctx, p.channel, p.stopTS) {
		p.stopTS = ""
	}
}

// deleteMessage deletes one of the bot's Stop controls; it reports whether
// the message is gone.
func (a *Adapter) deleteMessage(ctx context.Context, channel, ts string) bool {
	if ts == "" {
		return true
	}
	err := a.call(ctx, "chat.delete", channel, func(ctx context.Context) error {
		_, _, err := a.api.DeleteMessageContext(ctx, channel, ts)
		return err
	})
	if err != nil {
		a.log.Warn("slack: remove Stop control", "err", err)
		return false
	}
	return true
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
		delta := out[len(p.streamOut):]
		if m.Final {
			// The last piece goes with the stop: one call, not two.
			if err := a.stopStream(ctx, p, delta); err != nil {
				return err
			}
			p.streamRaw, p.streamOut = raw, out
		} else if delta != "" {
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
	} else if err := a.stopStream(ctx, p, ""); err != nil {
		return err
	}
	p.stream = false
	if m.Final && extended && fits {
		a.parkStop(ctx, p)
	} else {
		a.removeStop(ctx, p)
	}
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

// stopStream ends p's stream, with delta as its last piece.
func (a *Adapter) stopStream(ctx context.Context, p *posted, delta string) error {
	err := a.call(ctx, "chat.stopStream", p.channel, func(ctx context.Context) error {
		var opts []slack.MsgOption
		if delta != "" {
			opts = append(opts, slack.MsgOptionMarkdownText(delta))
		}
		_, _, err := a.api.StopStreamContext(ctx, p.channel, p.ts[0], opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("slack chat.stopStream: %w", err)
	}
	return nil
}
