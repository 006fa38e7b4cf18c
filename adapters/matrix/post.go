package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// post is a message the bot posted, possibly in several parts (events)
// when its text outgrew one event.
type post struct {
	thread adapters.ThreadRef
	ids    []id.EventID
	shown  []string
	used   time.Time
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
	a.mu.Lock()
	latest := a.latest[t.Key()]
	a.mu.Unlock()
	if latest == "" {
		latest = root
	}
	return (&event.RelatesTo{}).SetThread(root, latest)
}

// seenInThread records evID as the latest event of t's thread.
func (a *Adapter) seenInThread(t adapters.ThreadRef, evID id.EventID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.latest) >= maxTracked {
		// Forgetting is harmless: the fallback then names the root.
		for k := range a.latest {
			delete(a.latest, k)
			if len(a.latest) < maxTracked/2 {
				break
			}
		}
	}
	a.latest[t.Key()] = evID
}

// sendInThread posts c in t's thread.
func (a *Adapter) sendInThread(ctx context.Context, t adapters.ThreadRef, c *event.MessageEventContent) (id.EventID, error) {
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
func (a *Adapter) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
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
		// The turn is over: the last state of its messages (tool lines,
		// text) lands before the footer does.
		if err := a.ed.flushThread(ctx, t.Key()); err != nil {
			a.log.Warn("matrix: send the thread's last edits before its footer", "err", err)
		}
	}
	p := &post{thread: t}
	if err := a.show(ctx, p, messageMarkdown(m), m.Final); err != nil {
		if len(p.ids) == 0 {
			return adapters.MessageRef{}, err
		}
		// The message exists: the next edit sends the parts still missing.
		a.log.Warn("matrix: post the rest of a long message", "err", err)
	}
	a.mu.Lock()
	p.used = a.cfg.Now()
	a.posts[p.ids[0].String()] = p
	a.prune()
	a.mu.Unlock()
	return adapters.MessageRef{Thread: t, ID: p.ids[0].String()}, nil
}

// Edit implements adapters.Adapter. Edits are coalesced per event: the
// latest content always lands, intermediate ones may be skipped. A final
// edit is urgent: it is sent at once, ignoring the edit interval, and Edit
// returns once it has landed, so that what the bot posts next (the footer)
// comes after it.
func (a *Adapter) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	if m.Kind == adapters.KindTool {
		if err := a.editTool(ctx, ref, m.Tool, m.Final); err != nil {
			return err
		}
		if longOutput(m.Tool) {
			a.uploadOutput(ctx, ref.Thread, m.Tool)
		}
		return nil
	}
	a.mu.Lock()
	p := a.posts[ref.ID]
	if p == nil {
		// Not posted by this run (a restart): a one-part message.
		p = &post{thread: ref.Thread, ids: []id.EventID{id.EventID(ref.ID)}, shown: []string{""}}
		a.posts[ref.ID] = p
	}
	p.used = a.cfg.Now()
	a.mu.Unlock()
	return a.show(ctx, p, messageMarkdown(m), m.Final)
}

// show brings p's events in line with md: changed parts are edited, new
// parts are posted in the thread. With urgent, edits are sent at once.
func (a *Adapter) show(ctx context.Context, p *post, md string, urgent bool) error {
	parts := split(md)
	if len(parts) == 0 {
		parts = []part{{md: " ", c: content(" ")}}
	}
	room := id.RoomID(p.thread.Channel)
	for i, pt := range parts {
		if i < len(p.ids) {
			if p.shown[i] != pt.md {
				a.ed.set(room, p.thread.Key(), p.ids[i], editContent(p.ids[i], pt.c))
				p.shown[i] = pt.md
			}
			if urgent {
				if err := a.ed.sendNow(ctx, p.ids[i]); err != nil {
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
	st := a.statuses[t.Key()]
	if st != nil && st.open && len(st.lines) < maxStatusLines {
		// Lines with code blocks are long: a line that would make the
		// status event too big starts a new one.
		text := strings.Join(append(st.lines[:len(st.lines):len(st.lines)], line), "\n")
		if c := content(text); fitsIn(c, statusBytes) {
			st.lines = append(st.lines, line)
			ref := a.newToolRef(t, st, len(st.lines)-1, file)
			a.mu.Unlock()
			a.ed.set(st.room, t.Key(), st.id, editContent(st.id, c))
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
	a.statuses[t.Key()] = st
	return a.newToolRef(t, st, 0, file), nil
}

func (a *Adapter) newToolRef(t adapters.ThreadRef, st *statusMsg, line int, file bool) adapters.MessageRef {
	a.seq++
	key := "tool-" + strconv.FormatInt(a.seq, 10)
	a.toolRefs[key] = toolRef{st: st, line: line, file: file}
	return adapters.MessageRef{Thread: t, ID: key}
}

// editTool edits a tool's line; with urgent (the bot marked the line
// final) the edit is sent at once.
func (a *Adapter) editTool(ctx context.Context, ref adapters.MessageRef, tool *adapters.Tool, urgent bool) error {
	if tool == nil {
		return errors.New("matrix: tool message without a tool")
	}
	a.mu.Lock()
	tr, ok := a.toolRefs[ref.ID]
	if !ok {
		a.mu.Unlock()
		return fmt.Errorf("matrix: unknown tool line %s", ref.ID)
	}
	tr.st.lines[tr.line] = toolLine(tool, tr.file)
	text := strings.Join(tr.st.lines, "\n")
	if tool.State != adapters.ToolRunning {
		delete(a.toolRefs, ref.ID)
	}
	a.mu.Unlock()
	a.ed.set(tr.st.room, ref.Thread.Key(), tr.st.id, editContent(tr.st.id, content(text)))
	if urgent {
		return a.ed.sendNow(ctx, tr.st.id)
	}
	return nil
}

// closeStatus: the next tool line of t starts a new status message.
func (a *Adapter) closeStatus(t adapters.ThreadRef) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if st := a.statuses[t.Key()]; st != nil {
		st.open = false
		delete(a.statuses, t.Key())
	}
}

// prune forgets the least recently used messages and prompts once too many
// are kept (a.mu held). A forgotten message can still be edited as one part.
func (a *Adapter) prune() {
	if len(a.posts) > maxTracked {
		ages := make([]time.Time, 0, len(a.posts))
		for _, p := range a.posts {
			ages = append(ages, p.used)
		}
		slices.SortFunc(ages, time.Time.Compare)
		cutoff := ages[len(ages)/2]
		for k, p := range a.posts {
			if !p.used.After(cutoff) {
				delete(a.posts, k)
			}
		}
	}
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

// editor sends edits at most every EditInterval per event, coalescing:
// only the latest content of an event is sent. sendNow and flushThread
// send at once, for edits that must not wait (a message's final state).
type editor struct {
	a    *Adapter
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	// sendMu is held from taking an edit off pending until it has been
	// sent, so edits of one event land in the order they were set, and
	// sendNow returns only once the edit it asked for has landed, even
	// when the loop took it first.
	sendMu sync.Mutex

	mu      sync.Mutex
	pending map[id.EventID]*pendingEdit
	last    map[id.EventID]time.Time
	closed  bool
	count   int // edits sent
}

type pendingEdit struct {
	room    id.RoomID
	thread  adapters.ThreadKey
	content *event.MessageEventContent
	tries   int
}

// editTries bounds how often one edit is tried before it is given up.
const editTries = 3

func newEditor(a *Adapter) *editor {
	e := &editor{a: a, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		pending: map[id.EventID]*pendingEdit{}, last: map[id.EventID]time.Time{}}
	go e.run()
	return e
}

// set makes c the next edit of evID, in the thread with key thread.
func (e *editor) set(room id.RoomID, thread adapters.ThreadKey, evID id.EventID, c *event.MessageEventContent) {
	e.mu.Lock()
	e.pending[evID] = &pendingEdit{room: room, thread: thread, content: c}
	e.mu.Unlock()
	e.poke()
}

func (e *editor) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// sendNow sends evID's pending edit at once and returns when it has
// landed (nil also when there was none). A failed edit is left for the
// loop to try again.
func (e *editor) sendNow(ctx context.Context, evID id.EventID) error {
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	return e.sendOne(ctx, evID, true)
}

// flushThread sends every pending edit of the thread with key thread at
// once.
func (e *editor) flushThread(ctx context.Context, thread adapters.ThreadKey) error {
	e.mu.Lock()
	var evIDs []id.EventID
	for evID, pe := range e.pending {
		if pe.thread == thread {
			evIDs = append(evIDs, evID)
		}
	}
	e.mu.Unlock()
	var errs []error
	for _, evID := range evIDs {
		errs = append(errs, e.sendNow(ctx, evID))
	}
	return errors.Join(errs...)
}

// sendOne sends evID's pending edit if it is due (always with force);
// e.sendMu is held. A failed edit goes back to pending unless superseded.
func (e *editor) sendOne(ctx context.Context, evID id.EventID, force bool) error {
	e.mu.Lock()
	pe := e.pending[evID]
	if pe == nil || !force && time.Since(e.last[evID]) < e.a.cfg.EditInterval {
		e.mu.Unlock()
		return nil
	}
	delete(e.pending, evID)
	e.last[evID] = time.Now()
	e.mu.Unlock()
	_, err := e.a.send(ctx, pe.room, pe.content)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.a.log.Warn("matrix: edit message", "event", evID, "try", pe.tries+1, "err", err)
		if pe.tries+1 < editTries && e.pending[evID] == nil {
			pe.tries++
			e.pending[evID] = pe // not superseded: try again
			e.poke()
		}
		return err
	}
	e.count++
	return nil
}

func (e *editor) run() {
	defer close(e.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := e.sendDue(false)
		timer.Reset(wait)
		select {
		case <-e.stop:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for e.hasPending() && ctx.Err() == nil {
				e.sendDue(true)
			}
			return
		case <-e.wake:
		case <-timer.C:
		}
	}
}

func (e *editor) hasPending() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.pending) > 0
}

// sendDue sends the edits whose event may be edited now (all with force)
// and returns how long until the next one may.
func (e *editor) sendDue(force bool) time.Duration {
	interval := e.a.cfg.EditInterval
	now := time.Now()
	next := time.Hour
	e.mu.Lock()
	var due []id.EventID
	for evID := range e.pending {
		if wait := e.last[evID].Add(interval).Sub(now); wait > 0 && !force {
			next = min(next, wait)
			continue
		}
		due = append(due, evID)
	}
	for evID, t := range e.last {
		if now.Sub(t) > interval && e.pending[evID] == nil {
			delete(e.last, evID)
		}
	}
	e.mu.Unlock()
	for _, evID := range due {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		e.sendMu.Lock()
		_ = e.sendOne(ctx, evID, force) // logged; retried from pending
		e.sendMu.Unlock()
		cancel()
	}
	if len(due) > 0 {
		next = min(next, interval)
	}
	return next
}

func (e *editor) close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	e.mu.Unlock()
	close(e.stop)
	<-e.done
}
