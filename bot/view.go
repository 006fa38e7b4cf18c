package bot

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

// view is what the thread shows of its turns: the running turn's live
// text (one message per assistant message), tool lines, retry notices and
// footers, posted and edited through the adapter. It holds no store and no
// process: the worker hands it the CLI's events and records the turns.
type view struct {
	ad  adapters.Adapter // never waits on the platform (Ask excepted)
	ref adapters.ThreadRef
	log *slog.Logger
	tag *turnTag // set while the turn has a record (onInit)
	now func() time.Time
	// first is told when a turn's first text is handed over (observe.go).
	first *firstTexts

	turn *turn
	// seq numbers the turns the view began (thread.State.Turn).
	seq int
	// tools are the lines of tools shown running or waiting for a
	// decision, by tool_use id. They belong to the view, not the turn: a
	// background subagent's tools outlive the turn that started it.
	tools map[string]*toolLine
	// toolInputs keeps what each running tool call asked, by tool_use id:
	// some approval requests (ExitPlanMode) carry an empty input.
	toolInputs map[string]json.RawMessage
	// unstored are the records of running lines that ended or wait,
	// for the worker to forget (restartlines.go).
	unstored []string

	// ticker starts the refresh of running tools' time (tick) while a
	// tool runs; tickC delivers it, stopTick ends it.
	ticker   tickerFunc
	tickC    <-chan time.Time
	stopTick func()
}

// tickEvery is how often the running tools' time is refreshed.
const tickEvery = 5 * time.Second

func newView(d deps) view {
	return view{
		ad: d.ad, ref: d.ref, log: d.log, tag: d.tag, now: d.now, first: d.first, ticker: d.ticker,
		tools:      make(map[string]*toolLine),
		toolInputs: make(map[string]json.RawMessage),
	}
}

// turn is what the bot shows of one turn: live text messages (one per
// assistant message), tool lines, notices, then a footer.
type turn struct {
	prompt  string
	started time.Time
	// no is the turn's number in the view (seq).
	no int
	// storeID is the worker's record of the turn (0: none yet).
	storeID int64
	// asked is when the person's message that began the turn reached the
	// bot; zero for turns nobody asked, and once its first text is shown.
	asked time.Time

	texts     map[string]*liveText // by assistant message id
	textOrder []*liveText
	retry     *adapters.MessageRef
}

type liveText struct {
	id string
	// blocks accumulate deltas without copying what came before: a delta
	// costs its own length, not the message's.
	blocks   map[int]*strings.Builder
	order    []int
	streamed bool // text came from stream deltas; an assistant line then only completes its block
	ref      *adapters.MessageRef
	shown    string
	dirty    bool
	final    bool
}

func (l *liveText) text() string {
	if len(l.order) == 1 {
		return l.blocks[l.order[0]].String()
	}
	parts := make([]string, 0, len(l.order))
	for _, i := range l.order {
		if s := l.blocks[i].String(); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

func (l *liveText) block(index int) *strings.Builder {
	b := l.blocks[index]
	if b == nil {
		b = new(strings.Builder)
		l.blocks[index] = b
		l.order = append(l.order, index)
	}
	return b
}

// set replaces a block's text (the complete block, when it ends).
func (l *liveText) set(index int, s string) {
	b := l.block(index)
	if b.Len() == len(s) && b.String() == s {
		return
	}
	b.Reset()
	b.WriteString(s)
	l.dirty = true
}

func (l *liveText) appendDelta(index int, s string) {
	l.block(index).WriteString(s)
	l.dirty = true
}

// asked notes when the person's message that began the running turn
// reached the bot (zero: nobody asked), unless the turn has that already.
func (v *view) asked(at time.Time) {
	if v.turn != nil && v.turn.asked.IsZero() {
		v.turn.asked = at
	}
}

// textShown: a text message of the running turn was handed over as ref.
// The first one answers the message that asked: it is timed up to when
// the platform has it (firsttext.go), once.
func (v *view) textShown(ref adapters.MessageRef) {
	if t := v.turn; t != nil && !t.asked.IsZero() {
		c, _ := v.ad.(postTracker)
		v.first.handed(ref, t.asked, c)
		t.asked = time.Time{}
	}
}

// running: a turn is shown as running.
func (v *view) running() bool { return v.turn != nil }

// turnNo is the running turn's number, 0 when none runs.
func (v *view) turnNo() int {
	if v.turn == nil {
		return 0
	}
	return v.turn.no
}

// hasTools: some tool line is shown running (or waiting for a decision).
func (v *view) hasTools() bool { return len(v.tools) > 0 }

// begin starts showing a turn that prompt started.
func (v *view) begin(prompt string) {
	v.setStatus("is thinking…")
	v.tag.set(0)
	v.seq++
	v.turn = &turn{
		no:      v.seq,
		prompt:  prompt,
		started: v.now(),
		texts:   make(map[string]*liveText),
	}
	v.startTicker()
}

// ensureTurn is the running turn; one Claude started by itself (a
// background task finished, a wakeup or cron fired) begins here.
func (v *view) ensureTurn() *turn {
	if v.turn == nil {
		v.begin("(started by Claude)")
	}
	return v.turn
}

// end forgets the turn and clears the platform's "working" indicator.
func (v *view) end() {
	v.setStatus("")
	v.turn = nil
	v.tag.set(0)
}

// setStatus shows (or, empty, clears) the platform's "working" indicator,
// in order with the thread's messages (the adapter's mailroom keeps it so).
func (v *view) setStatus(status string) {
	if st, ok := v.ad.(adapters.Statuser); ok {
		if err := st.SetStatus(context.Background(), v.ref, status); err != nil {
			v.log.Debug("set status", "err", err)
		}
	}
}

func (v *view) startTicker() {
	if v.stopTick == nil {
		if v.ticker == nil {
			v.ticker = realTicker
		}
		v.tickC, v.stopTick = v.ticker(tickEvery)
	}
}

func (v *view) stopTicker() {
	if v.stopTick != nil {
		v.stopTick()
		v.tickC, v.stopTick = nil, nil
	}
}

func (v *view) onStream(ctx context.Context, e *claudeproc.StreamEvent) {
	if e.ParentToolUseID != "" {
		return // subagent text is not streamed into the thread
	}
	t := v.ensureTurn()
	switch {
	case e.EventType == "content_block_start" && e.Block != nil && e.Block.Type == "text":
		lt := t.fresh(e.APIMessageID)
		lt.streamed = true
		lt.set(e.Index, e.Block.Text)
	case e.EventType == "content_block_delta" && e.DeltaType == "text_delta":
		lt := t.live(e.APIMessageID)
		lt.streamed = true
		lt.appendDelta(e.Index, e.Delta)
		v.flush(ctx, false)
	case e.EventType == "content_block_stop" && e.Block != nil && e.Block.Type == "text":
		lt := t.live(e.APIMessageID)
		lt.set(e.Index, e.Block.Text)
		v.flush(ctx, false)
	case e.EventType == "message_stop":
		// The assistant message is complete: show its text as final now,
		// not at the end of the turn.
		if lt := t.texts[e.APIMessageID]; lt != nil {
			v.finalizeText(ctx, lt)
		}
	}
}

func (t *turn) live(id string) *liveText {
	lt := t.texts[id]
	if lt == nil {
		lt = &liveText{id: id, blocks: make(map[int]*strings.Builder)}
		t.texts[id] = lt
		t.textOrder = append(t.textOrder, lt)
	}
	return lt
}

// fresh is the live text a new text block of message id goes to: a block
// after one already shown final starts a message of its own.
func (t *turn) fresh(id string) *liveText {
	if lt := t.texts[id]; lt != nil && lt.final {
		delete(t.texts, id)
	}
	return t.live(id)
}

func (v *view) onAssistant(ctx context.Context, e *claudeproc.Assistant) {
	t := v.ensureTurn()
	if e.IsAPIError {
		return // the result that follows states it
	}
	for _, b := range e.Blocks {
		switch b.Type {
		case "text":
			if e.ParentToolUseID != "" {
				continue
			}
			// The CLI prints one assistant line per content block when
			// the block is complete: its text is final now, not at
			// message_stop or the result, so the last words are not
			// left to the edit pacing.
			lt := t.live(e.MessageID)
			if lt.streamed && len(lt.order) > 0 {
				lt.set(lt.order[len(lt.order)-1], b.Text)
			} else {
				// No stream events (the CLI fell back to a non-streaming
				// request): the assistant line is the text.
				lt = t.fresh(e.MessageID)
				lt.set(len(lt.order), b.Text)
			}
			v.finalizeText(ctx, lt)
		case "tool_use":
			if lt := t.texts[e.MessageID]; lt != nil && e.ParentToolUseID == "" {
				// The text before a tool call is complete: show it whole
				// before the tool line; text after the call starts anew.
				v.finalizeText(ctx, lt)
				delete(t.texts, e.MessageID)
			}
			v.flush(ctx, false)
			depth := 0
			if e.ParentToolUseID != "" {
				depth = 1
			}
			v.toolStart(ctx, b.ID, b.Name, b.Input, depth)
		}
	}
}

// finalizeText shows one message's text as complete.
func (v *view) finalizeText(ctx context.Context, lt *liveText) {
	if lt.final {
		return
	}
	text := lt.text()
	lt.dirty = false
	m := adapters.Message{Kind: adapters.KindText, Text: text, Final: true}
	if lt.ref == nil {
		if text == "" {
			return
		}
		ref, err := v.ad.Post(ctx, v.ref, m)
		if err != nil {
			v.log.Warn("post text", "err", err)
			return
		}
		lt.ref = &ref
		v.textShown(ref)
	} else if err := v.ad.Edit(ctx, *lt.ref, m); err != nil {
		v.log.Warn("edit text", "err", err)
		return
	}
	lt.shown, lt.final = text, true
}

// flush shows changed live text. final marks every text complete.
func (v *view) flush(ctx context.Context, final bool) {
	if v.turn == nil {
		return
	}
	for _, lt := range v.turn.textOrder {
		if lt.final {
			continue
		}
		if !lt.dirty && !final {
			continue
		}
		text := lt.text()
		lt.dirty = false
		if text == "" && lt.ref == nil {
			continue
		}
		m := adapters.Message{Kind: adapters.KindText, Text: text, Final: final}
		if lt.ref == nil {
			ref, err := v.ad.Post(ctx, v.ref, m)
			if err != nil {
				v.log.Warn("post text", "err", err)
				lt.dirty = true
				continue
			}
			lt.ref = &ref
			v.textShown(ref)
		} else if text != lt.shown || final {
			if err := v.ad.Edit(ctx, *lt.ref, m); err != nil {
				v.log.Warn("edit text", "err", err)
				lt.dirty = true
				continue
			}
		}
		lt.shown = text
		lt.final = final
	}
}
