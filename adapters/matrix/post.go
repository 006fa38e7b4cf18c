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

// threaded puts c in t's thread.
func threaded(c *event.MessageEventContent, t adapters.ThreadRef) *event.MessageEventContent {
	root := id.EventID(t.Thread)
	c.RelatesTo = (&event.RelatesTo{}).SetThread(root, root)
	return c
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
	p := &post{thread: t}
	if err := a.show(ctx, p, messageMarkdown(m)); err != nil {
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
// latest content always lands, intermediate ones may be skipped.
func (a *Adapter) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	if m.Kind == adapters.KindTool {
		if err := a.editTool(ref, m.Tool); err != nil {
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
	return a.show(ctx, p, messageMarkdown(m))
}

// show brings p's events in line with md: changed parts are edited, new
// parts are posted in the thread.
func (a *Adapter) show(ctx context.Context, p *post, md string) error {
	parts := split(md)
	if len(parts) == 0 {
		parts = []part{{md: " ", c: content(" ")}}
	}
	room := id.RoomID(p.thread.Channel)
	for i, pt := range parts {
		if i < len(p.ids) {
			if p.shown[i] != pt.md {
				a.ed.set(room, p.ids[i], editContent(p.ids[i], pt.c))
				p.shown[i] = pt.md
			}
			continue
		}
		evID, err := a.send(ctx, room, threaded(pt.c, p.thread))
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
			a.ed.set(st.room, st.id, editContent(st.id, c))
			return ref, nil
		}
	}
	a.mu.Unlock()
	room := id.RoomID(t.Channel)
	evID, err := a.send(ctx, room, threaded(content(line), t))
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

func (a *Adapter) editTool(ref adapters.MessageRef, tool *adapters.Tool) error {
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
	a.ed.set(tr.st.room, tr.st.id, editContent(tr.st.id, content(text)))
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
// only the latest content of an event is sent.
type editor struct {
	a    *Adapter
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	pending map[id.EventID]*pendingEdit
	last    map[id.EventID]time.Time
	closed  bool
	count   int // edits sent
}

type pendingEdit struct {
	room    id.RoomID
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

func (e *editor) set(room id.RoomID, evID id.EventID, c *event.MessageEventContent) {
	e.mu.Lock()
	e.pending[evID] = &pendingEdit{room: room, content: c}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
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
		e.mu.Lock()
		pe := e.pending[evID]
		delete(e.pending, evID)
		e.last[evID] = now
		e.mu.Unlock()
		if pe == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := e.a.send(ctx, pe.room, pe.content)
		cancel()
		if err != nil {
			e.a.log.Warn("matrix: edit message", "event", evID, "try", pe.tries+1, "err", err)
			e.mu.Lock()
			if pe.tries+1 < editTries && e.pending[evID] == nil {
				pe.tries++
				e.pending[evID] = pe // not superseded: try again
			}
			e.mu.Unlock()
			continue
		}
		e.mu.Lock()
		e.count++
		e.mu.Unlock()
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
