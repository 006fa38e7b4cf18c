package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/outbox"
)

// startEditors starts the edit and status editors. They outlive Run: edits
// made while the bot shuts down (final texts, expired prompts, cleared
// statuses) still land. Close stops them.
func (a *Adapter) startEditors() {
	clock := outbox.NowClock(a.now)
	a.edit = outbox.NewEditor(outbox.Config{
		Interval: a.cfg.EditInterval,
		Hold:     a.cfg.FinalHold,
		Clock:    clock,
		Retry:    retryable,
		Failed:   a.failed("edit", slog.LevelWarn),
	}, func(ctx context.Context, _ string, e pendingEdit) error {
		if e.apply != nil {
			return e.apply(ctx)
		}
		return a.editNow(ctx, e.ref, e.m)
	})
	// Not every channel is an assistant thread: a refused status is
	// expected, not worth a warning.
	a.status = outbox.NewEditor(outbox.Config{
		Interval: a.cfg.EditInterval,
		Clock:    clock,
		Retry:    retryable,
		Failed:   a.failed("status", slog.LevelDebug),
	}, a.sendStatus)
}

func (a *Adapter) failed(what string, lvl slog.Level) func(string, error) {
	return func(id string, err error) {
		if !errors.Is(err, context.Canceled) {
			a.log.Log(context.Background(), lvl, "slack: "+what+" failed", "id", id, "err", err)
		}
	}
}

// retryable: transport trouble, not a refusal of the content.
func retryable(err error) bool {
	var se slack.SlackErrorResponse
	return !errors.As(err, &se) && !errors.Is(err, errForgotten) && !errors.Is(err, context.Canceled)
}

// urgent: the message's final state (adapters.Adapter's Edit contract).
func urgent(m adapters.Message) bool {
	return m.Final || m.Kind == adapters.KindTool && m.Tool != nil && m.Tool.State.Done()
}

// pendingEdit is what the edit editor sends: a message's content m, or
// another change of a posted message (apply: a prompt's state).
type pendingEdit struct {
	ref   adapters.MessageRef
	m     adapters.Message
	apply func(context.Context) error
}

// Edit implements adapters.Adapter. It returns at once: the editor sends
// the latest content of each message, paced, so that a burst of edits costs
// one call and the final version always lands. A text's final state is
// held briefly, for the turn's footer to ride in its message (footer.go);
// a native stream's is not (its Stop control becomes the footer).
func (d *direct) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	a := (*Adapter)(d)
	p := a.lookup(ref)
	if p == nil && !a.adoptTool(ref, m) {
		return fmt.Errorf("slack: edit of unknown message %s", ref.ID)
	}
	e := pendingEdit{ref: ref, m: m}
	if m.Kind == adapters.KindText && m.Final && p != nil && !p.native {
		a.edit.Hold(refThread(ref), msgKey(ref), e)
		return nil
	}
	a.edit.Set(refThread(ref), msgKey(ref), e, urgent(m))
	return nil
}

// adoptTool takes on the tool line at ref that an earlier run posted (a
// restart ends the line of a request it expired): a tool line is one
// Slack message, named by its ts. Its long input, if any, went up as a
// file when it was first shown. It reports whether m is a tool line.
func (a *Adapter) adoptTool(ref adapters.MessageRef, m adapters.Message) bool {
	if m.Kind != adapters.KindTool || ref.ID == "" {
		return false
	}
	a.msgs.Put(msgKey(ref), &posted{channel: ref.Thread.Channel, thread: ref.Thread.Thread,
		ts: []string{ref.ID}, shown: []string{""}, input: uploadDone})
	return true
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

// flushThread sends the thread's pending final states before something new
// is posted in it, so the thread shows what the bot did in order.
func (a *Adapter) flushThread(ctx context.Context, t adapters.ThreadRef) {
	if err := a.edit.FlushThread(ctx, threadKey(t.Channel, t.Thread), false); err != nil {
		a.log.Warn("slack: send the thread's final edits before posting", "err", err)
	}
}

// threadState is what the adapter knows of a thread's status line: Slack
// clears it when the app replies in the thread, so a clear is sent only
// when a status may still show.
type threadState struct {
	mu       sync.Mutex
	shown    bool // a status was set and no reply has cleared it since
	inFlight bool // a setStatus call awaits its answer
	epoch    int  // setStatus calls begun
	// spare is the Stop control of a stream that ended with its final
	// text: the turn's footer, which comes next, takes its place with one
	// chat.update instead of a chat.delete and a chat.postMessage.
	spare string
}

func (a *Adapter) thread(channel, thread string) *threadState {
	k := threadKey(channel, thread)
	if st, ok := a.threads.Get(k); ok {
		return st
	}
	st := &threadState{}
	a.threads.Put(k, st)
	return st
}

// statusSettleWait bounds how long a reply waits for a setStatus call in
// flight: against Slack that call answers in a round trip, long before
// the model's first words; the wait keeps the two in order.
const statusSettleWait = 2 * time.Second

// replying marks the start of a reply in the thread; done reports it
// posted. Slack clears the status with the reply, so a status not yet
// sent is dropped (sending it would cost a call and, landing after the
// reply, leave it showing under the answer), and one in flight is waited
// for (at most statusSettleWait; past that the status is cleared at the
// turn's end).
func (a *Adapter) replying(ctx context.Context, channel, thread string) (done func()) {
	st := a.thread(channel, thread)
	wctx, cancel := context.WithTimeout(ctx, statusSettleWait)
	_ = a.status.Discard(wctx, threadKey(channel, thread))
	cancel()
	st.mu.Lock()
	clean, epoch := !st.inFlight, st.epoch
	st.mu.Unlock()
	return func() {
		st.mu.Lock()
		if clean && st.epoch == epoch {
			st.shown = false
		}
		st.mu.Unlock()
	}
}

// SetStatus implements adapters.Statuser: Slack's "is thinking…" line. It
// returns at once: the status goes out from the status editor, so a turn's
// prompt reaches Claude without waiting a Slack round trip (or a rate
// limit). Per thread one call is in flight at a time and only the latest
// status waits, so statuses land in the order they were set. A failure is
// logged there, not returned.
func (d *direct) SetStatus(ctx context.Context, t adapters.ThreadRef, status string) error {
	a := (*Adapter)(d)
	k := threadKey(t.Channel, t.Thread)
	a.status.Set(k, k, statusEdit{channel: t.Channel, thread: t.Thread, status: status}, true)
	return nil
}

type statusEdit struct{ channel, thread, status string }

// sendStatus sends a thread's latest status; a clear is not sent when the
// bot's reply has already cleared it.
func (a *Adapter) sendStatus(ctx context.Context, _ string, se statusEdit) error {
	channel, thread, status := se.channel, se.thread, se.status
	st := a.thread(channel, thread)
	st.mu.Lock()
	if status == "" && !st.shown {
		st.mu.Unlock()
		return nil
	}
	st.inFlight = true
	st.epoch++
	st.mu.Unlock()
	err := a.call(ctx, "assistant.threads.setStatus", channel, func(ctx context.Context) error {
		return a.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: channel, ThreadTS: thread, Status: status})
	})
	st.mu.Lock()
	st.inFlight = false
	if err == nil {
		st.shown = status != ""
	}
	st.mu.Unlock()
	return err
}

// parkStop keeps the Stop control of a stream that ended with its final
// text as the thread's spare, for the footer that follows.
func (a *Adapter) parkStop(ctx context.Context, p *posted) {
	if p.stopTS == "" {
		return
	}
	st := a.thread(p.channel, p.thread)
	st.mu.Lock()
	old := st.spare
	st.spare, p.stopTS = p.stopTS, ""
	st.mu.Unlock()
	a.deleteMessage(ctx, p.channel, old)
}

// takeSpare returns the thread's spare Stop control and leaves none.
func (a *Adapter) takeSpare(channel, thread string) string {
	st, ok := a.threads.Get(threadKey(channel, thread))
	if !ok {
		return ""
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	ts := st.spare
	st.spare = ""
	return ts
}
