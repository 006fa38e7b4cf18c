package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
	streamed        int      // bytes of text sent to the stream
	stopTS          string   // the Stop control shown beside an open stream
	fileSent        bool
}

// newRef names a posted message by the ts of its first Slack message: a
// ref stays valid across restarts (prompts are updated after one).
func (a *Adapter) newRef(t adapters.ThreadRef, p *posted) adapters.MessageRef {
	ref := adapters.MessageRef{Thread: t, ID: p.ts[0]}
	a.msgMu.Lock()
	a.msgs[msgKey(ref)] = p
	a.msgMu.Unlock()
	return ref
}

func msgKey(ref adapters.MessageRef) string { return ref.Thread.Channel + "|" + ref.ID }

func (a *Adapter) lookup(ref adapters.MessageRef) *posted {
	a.msgMu.Lock()
	defer a.msgMu.Unlock()
	return a.msgs[msgKey(ref)]
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
	a.edit.set(msgKey(ref), func(ctx context.Context) error {
		p := a.lookup(ref)
		if p.stream {
			return a.appendStream(ctx, p, m)
		}
		return a.render(ctx, p, m)
	}, m.Final || m.Kind == adapters.KindTool && m.Tool != nil && m.Tool.State != adapters.ToolRunning)
	return nil
}

// render brings a posted message to show m.
func (a *Adapter) render(ctx context.Context, p *posted, m adapters.Message) error {
	if err := a.show(ctx, p, a.compose(m)); err != nil {
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
		var ts string
		err := a.call(ctx, "chat.postMessage", p.channel, func(ctx context.Context) error {
			var err error
			_, ts, err = a.api.PostMessageContext(ctx, p.channel, append(part.options(), slack.MsgOptionTS(p.thread))...)
			return err
		})
		if err != nil {
			return fmt.Errorf("slack chat.postMessage: %w", err)
		}
		p.ts = append(p.ts, ts)
		p.shown = append(p.shown, key)
	}
	return nil
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

// compose lays a message out as Slack messages.
func (a *Adapter) compose(m adapters.Message) []part {
	switch m.Kind {
	case adapters.KindText:
		chunks := mdsplit.Split(m.Text, textPartRunes)
		if len(chunks) == 0 {
			chunks = []string{" "}
		}
		parts := make([]part, len(chunks))
		for i, c := range chunks {
			parts[i] = part{
				text:   slackmd.ToMrkdwn(adapters.Cut(c, fallbackRunes)),
				blocks: []slack.Block{slack.NewMarkdownBlock("", slackmd.Neutralize(c))},
			}
		}
		if !m.Final {
			last := &parts[len(parts)-1]
			last.blocks = append(last.blocks, slack.NewActionBlock("live",
				slack.NewButtonBlockElement(actionStop, "stop", plainText("Stop")).WithStyle(slack.StyleDanger)))
		}
		return parts
	case adapters.KindTool:
		s := toolLine(m.Tool)
		return []part{{text: s, blocks: []slack.Block{slack.NewContextBlock("", mdText(s))}}}
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

func toolLine(t *adapters.Tool) string {
	if t == nil {
		return " "
	}
	mark := map[adapters.ToolState]string{adapters.ToolRunning: "⚙", adapters.ToolOK: "✓", adapters.ToolFailed: "✗", adapters.ToolDenied: "⊘"}[t.State]
	s := strings.Repeat("    ", t.Depth) + mark + " *" + escapeMrkdwn(t.Name) + "*"
	if t.Input != "" {
		s += " " + inlineCode(adapters.Cut(t.Input, 300))
	}
	if t.Elapsed > 0 {
		s += " · " + adapters.FormatDuration(t.Elapsed)
	}
	if t.State != adapters.ToolRunning && t.Preview != "" {
		s += " — " + escapeMrkdwn(adapters.Cut(adapters.FirstLine(t.Preview), 200))
	}
	return adapters.Cut(s, contextTextRunes)
}

// escapeMrkdwn makes text literal in mrkdwn: no markup, no mentions.
func escapeMrkdwn(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// inlineCode wraps s in backticks, which it may not contain itself.
func inlineCode(s string) string {
	return "`" + escapeMrkdwn(strings.ReplaceAll(s, "`", "ˋ")) + "`"
}

// uploadOutput attaches a long tool output to the thread as a file.
func (a *Adapter) uploadOutput(ctx context.Context, p *posted, t *adapters.Tool) {
	name := strings.ToLower(t.Name) + "-output.txt"
	err := a.call(ctx, "files.getUploadURLExternal", p.channel, func(ctx context.Context) error {
		_, err := a.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Reader: strings.NewReader(t.Output), FileSize: len(t.Output), Filename: name,
			Title: t.Name + " output", Channel: p.channel, ThreadTimestamp: p.thread,
		})
		return err
	})
	if err != nil {
		a.log.Warn("slack: upload tool output", "err", err)
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

// SetStatus implements adapters.Statuser: Slack's "is thinking…" line.
func (a *Adapter) SetStatus(ctx context.Context, t adapters.ThreadRef, status string) error {
	return a.call(ctx, "assistant.threads.setStatus", t.Channel, func(ctx context.Context) error {
		return a.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: t.Channel, ThreadTS: t.Thread, Status: status})
	})
}

// Native streaming (chat.startStream / appendStream / stopStream).

func (a *Adapter) streamAllowed() bool { return atomic.LoadInt32(&a.streamOK) >= 0 }

func (a *Adapter) startStream(ctx context.Context, p *posted, text string) error {
	chunk := slackmd.Neutralize(text)
	var ts string
	err := a.call(ctx, "chat.startStream", p.channel, func(ctx context.Context) error {
		var err error
		opts := []slack.MsgOption{slack.MsgOptionTS(p.thread)}
		a.msgMu.Lock()
		user := a.asker[p.channel+"|"+p.thread]
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
	p.ts, p.shown, p.stream, p.streamed = []string{ts}, []string{""}, true, len(text)
	// A stream carries no buttons: the Stop control is a small message of
	// its own while the stream is open.
	stop := part{text: "Claude is answering…", blocks: []slack.Block{
		slack.NewActionBlock("live", slack.NewButtonBlockElement(actionStop, "stop", plainText("Stop")).WithStyle(slack.StyleDanger)),
	}}
	err = a.call(ctx, "chat.postMessage", p.channel, func(ctx context.Context) error {
		var err error
		_, p.stopTS, err = a.api.PostMessageContext(ctx, p.channel, append(stop.options(), slack.MsgOptionTS(p.thread))...)
		return err
	})
	if err != nil {
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

// appendStream sends what was added since the last append. A stream holds
// one part; text beyond it, or text that was rewritten rather than
// extended, ends the stream and goes on as ordinary messages.
func (a *Adapter) appendStream(ctx context.Context, p *posted, m adapters.Message) error {
	sent := p.streamed
	extended := len(m.Text) >= sent
	fits := utf8.RuneCountInString(m.Text) <= textPartRunes
	if extended && fits && len(m.Text) > sent {
		delta := slackmd.Neutralize(m.Text[sent:])
		err := a.call(ctx, "chat.appendStream", p.channel, func(ctx context.Context) error {
			_, _, err := a.api.AppendStreamContext(ctx, p.channel, p.ts[0], slack.MsgOptionMarkdownText(delta))
			return err
		})
		if err != nil {
			return fmt.Errorf("slack chat.appendStream: %w", err)
		}
		p.streamed = len(m.Text)
	}
	if extended && fits && !m.Final {
		return nil
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
	rest.Text = m.Text[sent:]
	tail := &posted{channel: p.channel, thread: p.thread}
	if err := a.render(ctx, tail, rest); err != nil {
		return err
	}
	p.ts = append(p.ts, tail.ts...)
	p.shown = append(p.shown, tail.shown...)
	return nil
}

// editor sends coalesced edits: per message only the latest content is
// kept; messages are served in the order they became dirty, each at most
// once per EditInterval unless the content is final.
type editor struct {
	a      *Adapter
	mu     sync.Mutex
	wake   chan struct{}
	queue  []string
	latest map[string]*pendingEdit
	last   map[string]time.Time
	busy   map[string]bool
}

type pendingEdit struct {
	apply func(context.Context) error
	final bool
}

func newEditor(a *Adapter) *editor {
	return &editor{a: a, wake: make(chan struct{}, 1), latest: map[string]*pendingEdit{}, last: map[string]time.Time{}, busy: map[string]bool{}}
}

func (e *editor) set(id string, apply func(context.Context) error, final bool) {
	e.mu.Lock()
	if prev, ok := e.latest[id]; ok {
		prev.apply, prev.final = apply, prev.final || final
	} else {
		e.latest[id] = &pendingEdit{apply: apply, final: final}
		e.queue = append(e.queue, id)
	}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// pending counts edits not yet sent (queued or in flight).
func (e *editor) pending() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.latest) + len(e.busy)
}

// run serves edits with a few senders until ctx ends, then sends what is
// left (bounded) so that final texts land.
func (e *editor) run(ctx context.Context) {
	const senders = 4
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.serve(ctx)
		}()
	}
	wg.Wait()
	drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for e.pending() > 0 && drain.Err() == nil {
		if !e.next(drain, true) {
			break
		}
	}
}

func (e *editor) serve(ctx context.Context) {
	for ctx.Err() == nil {
		if e.next(ctx, false) {
			continue
		}
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// next sends one due edit; it reports whether it did.
func (e *editor) next(ctx context.Context, ignorePace bool) bool {
	e.mu.Lock()
	now := e.a.now()
	idx := -1
	for i, id := range e.queue {
		if e.busy[id] {
			continue
		}
		pe := e.latest[id]
		if ignorePace || pe.final || now.Sub(e.last[id]) >= e.a.cfg.EditInterval {
			idx = i
			break
		}
	}
	if idx < 0 {
		e.mu.Unlock()
		return false
	}
	id := e.queue[idx]
	e.queue = append(e.queue[:idx], e.queue[idx+1:]...)
	pe := e.latest[id]
	delete(e.latest, id)
	e.busy[id] = true
	e.mu.Unlock()

	err := pe.apply(ctx)

	e.mu.Lock()
	delete(e.busy, id)
	e.last[id] = e.a.now()
	if err != nil && !errors.Is(err, context.Canceled) {
		e.a.log.Warn("slack: edit failed", "message", id, "err", err)
		if _, newer := e.latest[id]; !newer && ctx.Err() == nil && retryable(err) {
			e.latest[id] = pe
			e.queue = append(e.queue, id)
		}
	}
	if _, again := e.latest[id]; again && !contains(e.queue, id) {
		e.queue = append(e.queue, id)
	}
	e.mu.Unlock()
	return true
}

func contains(q []string, id string) bool {
	for _, x := range q {
		if x == id {
			return true
		}
	}
	return false
}

// retryable: transport trouble, not a refusal of the content.
func retryable(err error) bool {
	var se slack.SlackErrorResponse
	return !errors.As(err, &se)
}

// OpenThread implements adapters.Opener: a top-level message in the channel
// whose thread the scheduled run then uses.
func (a *Adapter) OpenThread(ctx context.Context, channel string, m adapters.Message) (adapters.ThreadRef, error) {
	parts := a.compose(m)
	var ts string
	err := a.call(ctx, "chat.postMessage", channel, func(ctx context.Context) error {
		var err error
		_, ts, err = a.api.PostMessageContext(ctx, channel, parts[0].options()...)
		return err
	})
	if err != nil {
		return adapters.ThreadRef{}, fmt.Errorf("slack open thread: %w", err)
	}
	return adapters.ThreadRef{Platform: Platform, Channel: channel, Thread: ts}, nil
}
