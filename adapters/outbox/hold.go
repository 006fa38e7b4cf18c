package outbox

import (
	"context"
	"time"
)

// A message's final edit whose text changed (the complete assistant
// message arrived after its deltas) is often followed within milliseconds
// by the turn's result, whose footer the adapter shows next. Sent at once,
// the final edit and the footer cost two calls; held back briefly
// (Config.Hold), the footer travels with the final text in one edit
// (issue 28: a short answer in several deltas costs 3 Slack calls, not 4,
// and 2 Matrix events, not 3). The hold never keeps the thread's order
// from holding: whatever the adapter shows next in the thread releases it
// first (FlushThread, as before each post), as do Flush, another Hold in
// the thread, a Set of the message, Close, and its deadline.

// Hold makes c the final content of message id in thread, like an urgent
// Set, but held back until Config.Hold has passed or something releases
// it, so that the adapter can take it (TakeHeld) and send it with what
// comes next. A thread holds one edit at a time: a Hold of another
// message in the thread releases the one held before.
func (e *Editor[C]) Hold(thread, id string, c C) {
	if e.cfg.Hold <= 0 {
		e.Set(thread, id, c, true)
		return
	}
	e.mu.Lock()
	for _, q := range e.queue {
		if it := e.items[q]; q != id && it.thread == thread && !it.held.IsZero() {
			it.held = time.Time{} // due now
		}
	}
	it := e.items[id]
	if it == nil {
		it = &item[C]{thread: thread}
		e.items[id] = it
	}
	if !it.pending || it.held.IsZero() {
		it.held = e.cfg.Clock.Now().Add(e.cfg.Hold)
	}
	it.c, it.urgent = c, true
	if !it.pending {
		it.pending, it.tries = true, 0
		e.queue = append(e.queue, id)
	}
	e.mu.Unlock()
	e.poke()
}

// TakeHeld takes the thread's held edit out of the editor, unsent: the
// adapter sends it itself, with what travels with it. It returns once no
// earlier send of that message is in flight (so the adapter's send comes
// after it), or with ctx's error, the edit then left to be sent as it
// was. ok is false when the thread holds none (never held, or released).
func (e *Editor[C]) TakeHeld(ctx context.Context, thread string) (id string, c C, ok bool, err error) {
	var zero C
	e.mu.Lock()
	for {
		id = ""
		for _, q := range e.queue {
			if it := e.items[q]; it.thread == thread && !it.held.IsZero() {
				id = q
				break
			}
		}
		if id == "" {
			e.mu.Unlock()
			return "", zero, false, nil
		}
		if !e.items[id].busy {
			break
		}
		// Wait for the send in flight; the hold may end meanwhile.
		if err := e.awaitChangeLocked(ctx); err != nil {
			return "", zero, false, err
		}
		e.mu.Lock()
	}
	it := e.items[id]
	for i, q := range e.queue {
		if q == id {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			break
		}
	}
	c = it.c
	it.c, it.pending, it.urgent, it.held = zero, false, false, time.Time{}
	e.mu.Unlock()
	return id, c, true, nil
}

// FinalHold is the hold the adapters use. What it must cover is not only
// the real CLI's gap between an answer's complete assistant line and its
// result (20–40 ms on average, up to ~80 ms, on a loaded machine) but also
// the bot's recording of the turn before it shows the footer (two SQLite
// commits, synchronous=FULL): from the final edit to the footer's post took
// 25–290 ms at load 9.5 on 2 cores, 16 of 18 turns within 200 ms
// (docs/PERFORMANCE.md, "The footer with the final edit"). When the footer
// comes the text waits only for it; the full hold is spent only when
// nothing follows the text for that long.
const FinalHold = 200 * time.Millisecond
