package matrix

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/outbox"
)

// post is a message the bot posted, possibly in several parts (events)
// when its text outgrew one event.
type post struct {
	thread adapters.ThreadRef
	ids    []id.EventID
	shown  []string
}

// statusMsg is the message that shows a run of tool calls, one line each,
// edited in place. Anything else posted in the thread closes it; the next
// tool starts a new one, so the thread reads in order.
type statusMsg struct {
	id    id.EventID
	room  id.RoomID
	lines []string
	open  bool
}

// maxStatusLines starts a new status message when one grows long.
const maxStatusLines = 40

// statusBytes bounds a status event when a line is added, leaving room
// for its lines to grow as they are edited (the elapsed time, a preview).
const statusBytes = maxContentBytes - 300*maxStatusLines

type toolRef struct {
	st   *statusMsg
	line int
	file bool // the tool's long input went up as a file
}

// maxTracked bounds the messages kept for edits; the oldest go first.
const maxTracked = 4096

// threadRelation puts an event in t's thread. Its reply fallback (for
// clients without threads) names the latest event the bot knows in the
// thread, as the spec's threading fallback asks, so that such clients
// show a chain rather than every message answering the root.
func (a *Adapter) threadRelation(t adapters.ThreadRef) *event.RelatesTo {
	root := id.EventID(t.Thread)
	latest, _ := a.latest.Get(t.Key())
	if latest == "" {
		latest = root
	}
	return (&event.RelatesTo{}).SetThread(root, latest)
}

// seenInThread records evID as the latest event of t's thread. Forgetting
// (a.latest is bounded) is harmless: the fallback then names the root.
func (a *Adapter) seenInThread(t adapters.ThreadRef, evID id.EventID) {
	a.latest.Put(t.Key(), evID)
}

// sendInThread posts c in t's thread.
func (a *Adapter) sendInThread(ctx context.Context, t adapters.ThreadRef, c *event.MessageEventContent) (id.EventID, error) {
	// The thread's final states land before anything posted after them.
	if err := a.ed.FlushThread(ctx, string(t.Key()), false); err != nil {
		a.log.Warn("matrix: send the thread's final edits before posting", "err", err)
	}
	c.RelatesTo = a.threadRelation(t)
	evID, err := a.send(ctx, id.RoomID(t.Channel), c)
	if err != nil {
		return "", err
	}
	a.seenInThread(t, evID)
	return evID, nil
}

func (a *Adapter) send(ctx context.Context, room id.RoomID, c any) (id.EventID, error) {
	select {
	case <-a.ready:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	resp, err := a.cli.SendMessageEvent(ctx, room, event.EventMessage, c)
	if err != nil {
		return "", err
	}
	return resp.EventID, nil
}

// Post implements adapters.Adapter.
func (d *direct) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	a := (*Adapter)(d)
	if m.Kind == adapters.KindTool {
		// A long input goes up once, when the tool's line is first posted.
		file := longInput(m.Tool) && a.uploadInput(ctx, t, m.Tool)
		ref, err := a.postTool(ctx, t, m.Tool, file)
		if err == nil && longOutput(m.Tool) {
			a.uploadOutput(ctx, t, m.Tool)
		}
		return ref, err
	}
	a.closeStatus(t)
	if m.Kind == adapters.KindFooter {
		if ref, ok := a.footerInHeld(ctx, t, m); ok {
			return ref, nil
		}
		// The turn is over: the last state of its messages (tool lines,
		// text) lands before the footer does.
		if err := a.ed.FlushThread(ctx, string(t.Key()), true); err != nil {
			a.log.Warn("matrix: send the thread's last edits before its footer", "err", err)
		}
	}
	p := &post{thread: t}
	if err := a.show(ctx, p, messageMarkdown(m), m.Final, false); err != nil {
		if len(p.ids) == 0 {
			return adapters.MessageRef{}, err
		}
		// The message exists: the next edit sends the parts still missing.
		a.log.Warn("matrix: post the rest of a long message", "err", err)
	}
	a.posts.Put(p.ids[0].String(), p)
	// The post counts as a send for pacing: the first live edit waits an
	// interval after it instead of following it at once.
	for _, evID := range p.ids {
		a.ed.Posted(string(t.Key()), evID.String())
	}
	return adapters.MessageRef{Thread: t, ID: p.ids[0].String()}, nil
}

// Edit implements adapters.Adapter. Edits are coalesced per event: the
// latest content always lands, intermediate ones may be skipped. A final
// edit is urgent: it is sent at once, ignoring the edit interval, and Edit
// returns once it has landed, so that what the bot posts next comes after
// it. A text's final edit of its last event is held briefly instead
// (outbox.Editor.Hold): the turn's footer rides in it (footer.go), and
// anything else posted in the thread sends it first.
func (d *direct) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	a := (*Adapter)(d)
	if m.Kind == adapters.KindTool {
		if err := a.editTool(ctx, ref, m.Tool, m.Final); err != nil {
			return err
		}
		if longOutput(m.Tool) {
			a.uploadOutput(ctx, ref.Thread, m.Tool)
		}
		return nil
	}
	p, ok := a.posts.Get(ref.ID)
	if !ok {
		// Not posted by this run (a restart) or forgotten since: a
		// one-part message.
		p = &post{thread: ref.Thread, ids: []id.EventID{id.EventID(ref.ID)}, shown: []string{""}}
		a.posts.Put(ref.ID, p)
	}
	return a.show(ctx, p, messageMarkdown(m), m.Final, m.Final && m.Kind == adapters.KindText)
}

// show brings p's events in line with md: changed parts are edited, new
// parts are posted in the thread. With urgent, edits are sent at once;
// with hold too, the last part's edit is held for the footer.
func (a *Adapter) show(ctx context.Context, p *post, md string, urgent, hold bool) error {
	parts := split(md)
	if len(parts) == 0 {
		parts = []part{{md: " ", c: content(" ")}}
	}
	room := id.RoomID(p.thread.Channel)
	for i, pt := range parts {
		if i < len(p.ids) {
			if p.shown[i] != pt.md && hold && i == len(parts)-1 {
				a.ed.Hold(string(p.thread.Key()), p.ids[i].String(), matrixEdit{room: room, content: editContent(p.ids[i], pt.c), md: pt.md})
				p.shown[i] = pt.md
				continue
			}
			if p.shown[i] != pt.md {
				a.setEdit(room, p.thread.Key(), p.ids[i], pt.c, urgent)
				p.shown[i] = pt.md
			}
			if urgent {
				if err := a.ed.Flush(ctx, p.ids[i].String()); err != nil {
					return fmt.Errorf("matrix: edit message: %w", err)
				}
			}
			continue
		}
		evID, err := a.sendInThread(ctx, p.thread, pt.c)
		if err != nil {
			return fmt.Errorf("matrix: post message: %w", err)
		}
		p.ids = append(p.ids, evID)
		p.shown = append(p.shown, pt.md)
	}
	return nil
}

func (a *Adapter) postTool(ctx context.Context, t adapters.ThreadRef, tool *adapters.Tool, file bool) (adapters.MessageRef, error) {
	if tool == nil {
		return adapters.MessageRef{}, errors.New("matrix: tool message without a tool")
	}
	line := toolLine(tool, file)
	a.mu.Lock()
	st, _ := a.statuses.Get(t.Key())
	if st != nil && st.open && len(st.lines) < maxStatusLines {
		// Lines with code blocks are long: a line that would make the
		// status event too big starts a new one.
		text := strings.Join(append(st.lines[:len(st.lines):len(st.lines)], line), "\n")
		if c := content(text); fitsIn(c, statusBytes) {
			st.lines = append(st.lines, line)
			ref := a.newToolRef(t, st, len(st.lines)-1, file)
			a.mu.Unlock()
			a.setEdit(st.room, t.Key(), st.id, c, false)
			return ref, nil
		}
	}
	a.mu.Unlock()
	room := id.RoomID(t.Channel)
	evID, err := a.sendInThread(ctx, t, content(line))
	if err != nil {
		return adapters.MessageRef{}, fmt.Errorf("matrix: post tool status: %w", err)
	}
	st = &statusMsg{id: evID, room: room, lines: []string{line}, open: true}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.statuses.Put(t.Key(), st)
	return a.newToolRef(t, st, 0, file), nil
}

// newToolRef names a tool's line by its status event and its place in it
// (toolRefID): a name the next run can still edit (revive.go).
func (a *Adapter) newToolRef(t adapters.ThreadRef, st *statusMsg, line int, file bool) adapters.MessageRef {
	key := toolRefID(st.id, line, file)
	a.toolRefs.Put(key, toolRef{st: st, line: line, file: file})
	return adapters.MessageRef{Thread: t, ID: key}
}

// editTool edits a tool's line; with urgent (the bot marked the line
// final) the edit is sent at once.
func (a *Adapter) editTool(ctx context.Context, ref adapters.MessageRef, tool *adapters.Tool, urgent bool) error {
	if tool == nil {
		return errors.New("matrix: tool message without a tool")
	}
	a.mu.Lock()
	tr, ok := a.toolRefs.Get(ref.ID)
	if !ok {
		a.mu.Unlock()
		return a.reviveTool(ctx, ref, tool)
	}
	tr.st.lines[tr.line] = toolLine(tool, tr.file)
	text := strings.Join(tr.st.lines, "\n")
	if tool.State.Done() {
		a.toolRefs.Remove(ref.ID)
	}
	a.mu.Unlock()
	a.setEdit(tr.st.room, ref.Thread.Key(), tr.st.id, content(text), urgent)
	if urgent {
		return a.ed.Flush(ctx, tr.st.id.String())
	}
	return nil
}

// closeStatus: the next tool line of t starts a new status message.
func (a *Adapter) closeStatus(t adapters.ThreadRef) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if st, ok := a.statuses.Get(t.Key()); ok {
		st.open = false
		a.statuses.Remove(t.Key())
	}
}

// prunePrompts forgets the closed prompts once too many are kept (a.mu
// held); open ones are kept until they close.
func (a *Adapter) prunePrompts() {
	if len(a.prompts) > maxTracked {
		for k, p := range a.prompts {
			if p.closed {
				delete(a.prompts, k)
			}
		}
	}
}

// OpenThread implements adapters.Opener: a scheduled run's first message
// is top-level in the room, and the run's thread hangs off it.
func (a *Adapter) OpenThread(ctx context.Context, channel string, m adapters.Message) (adapters.ThreadRef, error) {
	room := id.RoomID(channel)
	evID, err := a.send(ctx, room, content(messageMarkdown(m)))
	if err != nil {
		return adapters.ThreadRef{}, fmt.Errorf("matrix: open a thread in %s: %w", channel, err)
	}
	return threadRef(room, evID), nil
}

// matrixEdit is one m.replace edit, as the editor keeps it; md is the
// Markdown of a held text's part, for the footer to join.
type matrixEdit struct {
	room    id.RoomID
	content *event.MessageEventContent
	md      string
}

// editTries bounds how often one edit is tried before it is given up
// (mautrix has already retried each try's rate limits and 5xx).
const editTries = 3

// newEditor: edits at most every EditInterval per event, coalesced; the
// final states are sent at once (see outbox.Editor).
func newEditor(a *Adapter) *outbox.Editor[matrixEdit] {
	return outbox.NewEditor(outbox.Config{
		Interval: a.cfg.EditInterval,
		Hold:     a.cfg.FinalHold,
		Retry:    func(error) bool { return true },
		Tries:    editTries,
		Failed: func(evID string, err error) {
			a.log.Warn("matrix: edit message", "event", evID, "err", err)
		},
	}, func(ctx context.Context, _ string, e matrixEdit) error {
		_, err := a.send(ctx, e.room, e.content)
		return err
	})
}

// setEdit makes c the next content of evID, in the thread with key thread.
func (a *Adapter) setEdit(room id.RoomID, thread adapters.ThreadKey, evID id.EventID, c *event.MessageEventContent, urgent bool) {
	a.ed.Set(string(thread), evID.String(), matrixEdit{room: room, content: editContent(evID, c)}, urgent)
}
