// Package courier carries the bot's messages to a chat adapter so that a
// thread's worker never waits on a platform: Post and Edit return at once,
// and one lane per thread makes the calls in the order they were asked.
//
// A platform's own pacing (Slack's one post a second per channel, Matrix's
// edit interval, 429s) is the adapter's business; while a lane waits on it,
// what queues behind collapses: the edits of one message that are still
// waiting become one edit of its latest content, and an edit of a message
// whose post is still waiting becomes the content that post sends. So the
// worker goes on reading claude's output and its mailbox (a "stop", the next
// message) whatever the platform does, and the thread shows the same
// messages, in the same order, with the same final content.
//
// Post hands back a provisional ref at once; the lane swaps it for the
// platform's when the post is made. Ask is the one call that waits: its ref
// is stored so that the prompt can be updated after a restart, and a prompt
// that could not be posted must not be decided. It waits for its turn in
// the lane, so a prompt still follows the text before it.
package courier

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/claudeops/claudeops/adapters"
)

// provisional marks the refs Post hands out before the platform has the
// message; a platform id never starts with it.
const provisional = "courier:"

// ErrClosed is returned once Close has begun.
var ErrClosed = errors.New("courier: closed")

// Courier wraps one adapter. Its Post, Edit and UpdatePrompt queue the call
// and return; Ask, Name and Run are the adapter's, Ask after the calls
// queued before it in the thread. The adapter's optional interfaces are
// not wrapped: the bot asks the adapter itself for them.
type Courier struct {
	ad  adapters.Adapter
	log *slog.Logger

	// posted, if set, is told of each post the platform took (onposted.go).
	posted func(t adapters.ThreadRef, id string)

	mu     sync.Mutex
	lanes  map[adapters.ThreadRef]*lane
	seq    uint64
	closed bool
	idle   *sync.Cond // signalled when a lane empties
}

// lane is one thread's queue. Only its runner goroutine calls the adapter;
// resolved holds the platform ids of provisional refs, kept while the
// thread has a lane or a provisional ref may still be edited.
type lane struct {
	thread  adapters.ThreadRef
	jobs    []*job
	running bool
	forget  bool // Forget came while the lane ran: drop it once empty
	// resolved maps provisional ids to platform ids ("" while the post
	// failed); order keeps them oldest first, to hold at most maxResolved.
	resolved map[string]string
	order    []string
}

// maxResolved bounds the ids kept per thread: far more messages than one
// turn posts (the worker edits only messages of its running turn, its
// queue notices and its tool lines).
const maxResolved = 4096

type jobKind int

const (
	jobPost jobKind = iota
	jobEdit
	jobAsk
	jobUpdate
	jobStatus
	jobFile
)

type job struct {
	kind   jobKind
	thread adapters.ThreadRef
	id     string // the message's id: provisional for a post, as given for edits
	msg    adapters.Message
	prompt adapters.Prompt
	status string           // jobStatus only
	file   adapters.OutFile // jobFile only
	ctx    context.Context
	done   chan askResult // jobAsk and jobFile
}

type askResult struct {
	ref adapters.MessageRef
	err error
}

// New wraps ad. log may be nil.
func New(ad adapters.Adapter, log *slog.Logger) *Courier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Courier{ad: ad, log: log, lanes: map[adapters.ThreadRef]*lane{}}
	c.idle = sync.NewCond(&c.mu)
	return c
}

// Name is the adapter's.
func (c *Courier) Name() string { return c.ad.Name() }

// Run is the adapter's.
func (c *Courier) Run(ctx context.Context, deliver func(context.Context, adapters.Event) error) error {
	return c.ad.Run(ctx, deliver)
}

// Post queues the message and returns its provisional ref. It fails only
// once Close has begun.
func (c *Courier) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return adapters.MessageRef{}, ErrClosed
	}
	c.seq++
	id := provisional + strconv.FormatUint(c.seq, 10)
	c.enqueueLocked(&job{kind: jobPost, thread: t, id: id, msg: detach(m), ctx: context.WithoutCancel(ctx)})
	return adapters.MessageRef{Thread: t, ID: id}, nil
}

// Edit queues the edit. Still waiting in the lane, an edit of the same
// message, or its post, takes the new content instead.
func (c *Courier) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	m = detach(m)
	if j := c.waitingLocked(ref, jobPost, jobEdit); j != nil {
		j.msg = m
		return nil
	}
	c.enqueueLocked(&job{kind: jobEdit, thread: ref.Thread, id: ref.ID, msg: m, ctx: context.WithoutCancel(ctx)})
	return nil
}

// UpdatePrompt queues the update; a waiting update of the same prompt
// takes the new state instead.
func (c *Courier) UpdatePrompt(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	p.Choices, p.Questions = slices.Clone(p.Choices), slices.Clone(p.Questions)
	if j := c.waitingLocked(ref, jobUpdate); j != nil {
		j.prompt = p
		return nil
	}
	c.enqueueLocked(&job{kind: jobUpdate, thread: ref.Thread, id: ref.ID, prompt: p, ctx: context.WithoutCancel(ctx)})
	return nil
}

// SetStatus queues the thread's status line (adapters.Statuser), after
// what is queued before it: a status set when a turn begins must not land
// after the answer, nor a clear before it (Slack clears the status with the
// bot's reply, so a clear that waits its turn often costs no call). A
// status still waiting is dropped for the new one. It does nothing when
// the adapter shows no status.
func (c *Courier) SetStatus(ctx context.Context, t adapters.ThreadRef, status string) error {
	if _, ok := c.ad.(adapters.Statuser); !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if l := c.lanes[t]; l != nil {
		l.jobs = slices.DeleteFunc(l.jobs, func(j *job) bool { return j.kind == jobStatus })
	}
	c.enqueueLocked(&job{kind: jobStatus, thread: t, status: status, ctx: context.WithoutCancel(ctx)})
	return nil
}

// Ask posts the prompt after what is queued before it in the thread, and
// returns the platform's ref or error. It waits at most until ctx ends.
func (c *Courier) Ask(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt) (adapters.MessageRef, error) {
	return c.await(ctx, &job{kind: jobAsk, thread: t, prompt: p, ctx: ctx})
}

// await queues j after what is queued before it in its thread and waits
// for the platform's answer at most until ctx ends.
func (c *Courier) await(ctx context.Context, j *job) (adapters.MessageRef, error) {
	j.done = make(chan askResult, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return adapters.MessageRef{}, ErrClosed
	}
	c.enqueueLocked(j)
	c.mu.Unlock()
	select {
	case r := <-j.done:
		return r.ref, r.err
	case <-ctx.Done():
		return adapters.MessageRef{}, ctx.Err()
	}
}

// detach copies what m points to: the caller goes on changing its tool
// line while the copy waits in the lane.
func detach(m adapters.Message) adapters.Message {
	if m.Tool != nil {
		t := *m.Tool
		m.Tool = &t
	}
	return m
}

// Close stops taking calls and waits until every lane has made what was
// queued, or ctx ends (what is left is dropped, and counted in the log).
func (c *Courier) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.busyLocked() > 0 && ctx.Err() == nil {
		c.idle.Wait()
	}
	if n := c.busyLocked(); n > 0 {
		c.log.Warn("courier: closed with messages still queued", "threads", n)
		return ctx.Err()
	}
	return nil
}

// Idle reports whether no lane has calls queued or being made.
func (c *Courier) Idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.busyLocked() == 0
}

// busyLocked counts the lanes with calls queued or being made.
func (c *Courier) busyLocked() int {
	n := 0
	for _, l := range c.lanes {
		if l.running {
			n++
		}
	}
	return n
}

// waitingLocked is the last job of ref's message among those not started,
// if it is of one of kinds and nothing of that message follows it.
func (c *Courier) waitingLocked(ref adapters.MessageRef, kinds ...jobKind) *job {
	l := c.lanes[ref.Thread]
	if l == nil {
		return nil
	}
	for i := len(l.jobs) - 1; i >= 0; i-- {
		j := l.jobs[i]
		if j.id != ref.ID || j.kind == jobAsk || j.kind == jobFile {
			continue
		}
		for _, k := range kinds {
			if j.kind == k {
				return j
			}
		}
		return nil
	}
	return nil
}

func (c *Courier) enqueueLocked(j *job) {
	l := c.lanes[j.thread]
	if l == nil {
		l = &lane{thread: j.thread, resolved: map[string]string{}}
		c.lanes[j.thread] = l
	}
	l.jobs = append(l.jobs, j)
	if !l.running {
		l.running = true
		go c.run(l)
	}
}

// run makes the lane's calls in order until it is empty.
func (c *Courier) run(l *lane) {
	for {
		c.mu.Lock()
		if len(l.jobs) == 0 {
			l.running = false
			if l.forget && c.lanes[l.thread] == l {
				delete(c.lanes, l.thread)
			}
			c.idle.Broadcast()
			c.mu.Unlock()
			return
		}
		j := l.jobs[0]
		l.jobs = l.jobs[1:]
		c.mu.Unlock()
		c.do(l, j)
	}
}

// Forget drops what the courier keeps for thread t (the platform ids of its
// provisional refs) once its worker has ended; a call for t after that
// starts afresh. What is still queued for t is made first.
func (c *Courier) Forget(t adapters.ThreadRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.lanes[t]; l != nil && !l.running {
		delete(c.lanes, t)
	} else if l != nil {
		l.forget = true
	}
}

// do makes one call. A failure is logged and goes no further: the worker
// has moved on. The next edit of a message whose post failed posts it
// again, so a message's final content still lands when the platform
// recovers.
func (c *Courier) do(l *lane, j *job) {
	switch j.kind {
	case jobPost:
		ref, err := c.ad.Post(j.ctx, j.thread, j.msg)
		c.resolve(l, j.id, ref.ID, err)
	case jobEdit:
		id, known := c.platformID(l, j.id)
		if known && id == "" {
			ref, err := c.ad.Post(j.ctx, j.thread, j.msg)
			c.resolve(l, j.id, ref.ID, err)
			return
		}
		if err := c.ad.Edit(j.ctx, adapters.MessageRef{Thread: j.thread, ID: id}, j.msg); err != nil {
			c.log.Warn("edit message", "thread", j.thread.Key(), "err", err)
		}
	case jobUpdate:
		id, _ := c.platformID(l, j.id)
		if err := c.ad.UpdatePrompt(j.ctx, adapters.MessageRef{Thread: j.thread, ID: id}, j.prompt); err != nil {
			c.log.Warn("update prompt", "thread", j.thread.Key(), "err", err)
		}
	case jobStatus:
		if err := c.ad.(adapters.Statuser).SetStatus(j.ctx, j.thread, j.status); err != nil {
			c.log.Debug("set status", "thread", j.thread.Key(), "err", err)
		}
	case jobAsk:
		if err := j.ctx.Err(); err != nil {
			j.done <- askResult{err: err} // nobody waits for it any more
			return
		}
		ref, err := c.ad.Ask(j.ctx, j.thread, j.prompt)
		j.done <- askResult{ref: ref, err: err}
	case jobFile:
		j.done <- c.postFile(j)
	}
}

// platformID is the platform's id for id: id itself unless it is
// provisional; known reports a provisional id, whose platform id is "" when
// its post failed (or it is too old to be kept).
func (c *Courier) platformID(l *lane, id string) (pid string, known bool) {
	if !strings.HasPrefix(id, provisional) {
		return id, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return l.resolved[id], true
}

func (c *Courier) resolve(l *lane, id, pid string, err error) {
	if err != nil {
		c.log.Warn("post message", "thread", l.thread.Key(), "err", err)
		pid = ""
	} else if c.posted != nil {
		defer c.posted(l.thread, id) // once Posted says so too
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := l.resolved[id]; !ok {
		l.order = append(l.order, id)
		if len(l.order) > maxResolved {
			delete(l.resolved, l.order[0])
			l.order = l.order[1:]
		}
	}
	l.resolved[id] = pid
}
