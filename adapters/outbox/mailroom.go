package outbox

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// Platform is what a Mailroom carries calls to: an adapter's own calls,
// which may wait on the platform (its round trips, its rate limits, a
// Retry-After). Its optional adapters.Statuser and adapters.FilePoster
// are used when it has them.
type Platform interface {
	Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error)
	Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error
	Ask(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt) (adapters.MessageRef, error)
	UpdatePrompt(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error
}

// provisional marks the refs Post hands out before the platform has the
// message; a platform id never starts with it.
const provisional = "outbox:"

// ErrClosed is returned once Close has begun.
var ErrClosed = errors.New("outbox: mailroom closed")

// Mailroom is an adapter's way out (see the package doc): its Post, Edit,
// UpdatePrompt and SetStatus queue the call in the thread's lane and
// return; Ask and PostFile wait for their turn and the platform's answer.
// An adapter embeds it over its own calls, so that the bot holds one
// handle per platform and no method of adapters.Adapter but Ask waits.
type Mailroom struct {
	pl  Platform
	log *slog.Logger

	// posted, if set, is told of each post the platform took (mailroom_posted.go).
	posted func(t adapters.ThreadRef, id string)

	mu     sync.Mutex
	lanes  map[adapters.ThreadRef]*lane
	seq    uint64
	closed bool
	idle   *sync.Cond // signalled when a lane empties or a post resolves
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

// NewMailroom carries calls to pl. log may be nil.
func NewMailroom(pl Platform, log *slog.Logger) *Mailroom {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mr := &Mailroom{pl: pl, log: log, lanes: map[adapters.ThreadRef]*lane{}}
	mr.idle = sync.NewCond(&mr.mu)
	return mr
}

// Post queues the message and returns its provisional ref. It fails only
// once Close has begun.
func (mr *Mailroom) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.closed {
		return adapters.MessageRef{}, ErrClosed
	}
	mr.seq++
	id := provisional + strconv.FormatUint(mr.seq, 10)
	mr.enqueueLocked(&job{kind: jobPost, thread: t, id: id, msg: detach(m), ctx: context.WithoutCancel(ctx)})
	return adapters.MessageRef{Thread: t, ID: id}, nil
}

// Edit queues the edit. Still waiting in the lane, an edit of the same
// message, or its post, takes the new content instead.
func (mr *Mailroom) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.closed {
		return ErrClosed
	}
	m = detach(m)
	if j := mr.waitingLocked(ref, jobPost, jobEdit); j != nil {
		j.msg = m
		return nil
	}
	mr.enqueueLocked(&job{kind: jobEdit, thread: ref.Thread, id: ref.ID, msg: m, ctx: context.WithoutCancel(ctx)})
	return nil
}

// UpdatePrompt queues the update; a waiting update of the same prompt
// takes the new state instead.
func (mr *Mailroom) UpdatePrompt(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.closed {
		return ErrClosed
	}
	p.Choices, p.Questions = slices.Clone(p.Choices), slices.Clone(p.Questions)
	if j := mr.waitingLocked(ref, jobUpdate); j != nil {
		j.prompt = p
		return nil
	}
	mr.enqueueLocked(&job{kind: jobUpdate, thread: ref.Thread, id: ref.ID, prompt: p, ctx: context.WithoutCancel(ctx)})
	return nil
}

// SetStatus queues the thread's status line (adapters.Statuser), after
// what is queued before it: a status set when a turn begins must not land
// after the answer, nor a clear before it (Slack clears the status with the
// bot's reply, so a clear that waits its turn often costs no call). A
// status still waiting is dropped for the new one. It does nothing when
// the adapter shows no status.
func (mr *Mailroom) SetStatus(ctx context.Context, t adapters.ThreadRef, status string) error {
	if _, ok := mr.pl.(adapters.Statuser); !ok {
		return nil
	}
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.closed {
		return ErrClosed
	}
	if l := mr.lanes[t]; l != nil {
		l.jobs = slices.DeleteFunc(l.jobs, func(j *job) bool { return j.kind == jobStatus })
	}
	mr.enqueueLocked(&job{kind: jobStatus, thread: t, status: status, ctx: context.WithoutCancel(ctx)})
	return nil
}

// Ask posts the prompt after what is queued before it in the thread, and
// returns the platform's ref or error. It waits at most until ctx ends.
func (mr *Mailroom) Ask(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt) (adapters.MessageRef, error) {
	return mr.await(ctx, &job{kind: jobAsk, thread: t, prompt: p, ctx: ctx})
}

// await queues j after what is queued before it in its thread and waits
// for the platform's answer at most until ctx ends.
func (mr *Mailroom) await(ctx context.Context, j *job) (adapters.MessageRef, error) {
	j.done = make(chan askResult, 1)
	mr.mu.Lock()
	if mr.closed {
		mr.mu.Unlock()
		return adapters.MessageRef{}, ErrClosed
	}
	mr.enqueueLocked(j)
	mr.mu.Unlock()
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
func (mr *Mailroom) Close(ctx context.Context) error {
	mr.mu.Lock()
	mr.closed = true
	mr.mu.Unlock()
	return mr.Drain(ctx)
}

// CloseWithin is Close bounded by d: what an adapter's own Close calls
// (what is left is logged).
func (mr *Mailroom) CloseWithin(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = mr.Close(ctx)
}

// Drain waits until every lane has made what was queued, or ctx ends; it
// goes on taking calls (the bot drains before its adapters close).
func (mr *Mailroom) Drain(ctx context.Context) error {
	defer mr.wakeOnDone(ctx)()
	mr.mu.Lock()
	defer mr.mu.Unlock()
	for mr.busyLocked() > 0 && ctx.Err() == nil {
		mr.idle.Wait()
	}
	if n := mr.busyLocked(); n > 0 {
		mr.log.Warn("outbox: messages still queued", "threads", n)
		return ctx.Err()
	}
	return nil
}

// wakeOnDone wakes the waiters on mr.idle when ctx ends; call the func it
// returns once done waiting.
func (mr *Mailroom) wakeOnDone(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, func() {
		mr.mu.Lock()
		mr.idle.Broadcast()
		mr.mu.Unlock()
	})
}

// ErrNotPosted: the post a provisional ref stands for failed, or is no
// longer known.
var ErrNotPosted = errors.New("outbox: message not posted")

// Await waits until the post Post handed out ref for has been made (nil)
// or has failed (ErrNotPosted), or ctx ends: for a caller to whom only a
// post the platform took counts (a notice that must be given once). A ref
// that is not provisional was made already.
func (mr *Mailroom) Await(ctx context.Context, ref adapters.MessageRef) error {
	if !strings.HasPrefix(ref.ID, provisional) {
		return nil
	}
	defer mr.wakeOnDone(ctx)()
	mr.mu.Lock()
	defer mr.mu.Unlock()
	for ctx.Err() == nil {
		l := mr.lanes[ref.Thread]
		if l == nil {
			return ErrNotPosted
		}
		if pid, ok := l.resolved[ref.ID]; ok {
			if pid == "" {
				return ErrNotPosted
			}
			return nil
		}
		mr.idle.Wait()
	}
	return ctx.Err()
}

// Idle reports whether no lane has calls queued or being made.
func (mr *Mailroom) Idle() bool {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	return mr.busyLocked() == 0
}

// busyLocked counts the lanes with calls queued or being made.
func (mr *Mailroom) busyLocked() int {
	n := 0
	for _, l := range mr.lanes {
		if l.running {
			n++
		}
	}
	return n
}

// waitingLocked is the last job of ref's message among those not started,
// if it is of one of kinds and nothing of that message follows it.
func (mr *Mailroom) waitingLocked(ref adapters.MessageRef, kinds ...jobKind) *job {
	l := mr.lanes[ref.Thread]
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

func (mr *Mailroom) enqueueLocked(j *job) {
	l := mr.lanes[j.thread]
	if l == nil {
		l = &lane{thread: j.thread, resolved: map[string]string{}}
		mr.lanes[j.thread] = l
	}
	l.jobs = append(l.jobs, j)
	if !l.running {
		l.running = true
		go mr.run(l)
	}
}

// run makes the lane's calls in order until it is empty.
func (mr *Mailroom) run(l *lane) {
	for {
		mr.mu.Lock()
		if len(l.jobs) == 0 {
			l.running = false
			if l.forget && mr.lanes[l.thread] == l {
				delete(mr.lanes, l.thread)
			}
			mr.idle.Broadcast()
			mr.mu.Unlock()
			return
		}
		j := l.jobs[0]
		l.jobs = l.jobs[1:]
		mr.mu.Unlock()
		mr.do(l, j)
	}
}

// Forget drops what the mailroom keeps for thread t (the platform ids of its
// provisional refs) once its worker has ended; a call for t after that
// starts afresh. What is still queued for t is made first.
func (mr *Mailroom) Forget(t adapters.ThreadRef) {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if l := mr.lanes[t]; l != nil && !l.running {
		delete(mr.lanes, t)
	} else if l != nil {
		l.forget = true
	}
}

// do makes one call. A failure is logged and goes no further: the worker
// has moved on. The next edit of a message whose post failed posts it
// again, so a message's final content still lands when the platform
// recovers.
func (mr *Mailroom) do(l *lane, j *job) {
	switch j.kind {
	case jobPost:
		ref, err := mr.pl.Post(j.ctx, j.thread, j.msg)
		mr.resolve(l, j.id, ref.ID, err)
	case jobEdit:
		id, known := mr.platformID(l, j.id)
		if known && id == "" {
			ref, err := mr.pl.Post(j.ctx, j.thread, j.msg)
			mr.resolve(l, j.id, ref.ID, err)
			return
		}
		if err := mr.pl.Edit(j.ctx, adapters.MessageRef{Thread: j.thread, ID: id}, j.msg); err != nil {
			mr.log.Warn("edit message", "thread", j.thread.Key(), "err", err)
		}
	case jobUpdate:
		id, _ := mr.platformID(l, j.id)
		if err := mr.pl.UpdatePrompt(j.ctx, adapters.MessageRef{Thread: j.thread, ID: id}, j.prompt); err != nil {
			mr.log.Warn("update prompt", "thread", j.thread.Key(), "err", err)
		}
	case jobStatus:
		if err := mr.pl.(adapters.Statuser).SetStatus(j.ctx, j.thread, j.status); err != nil {
			mr.log.Debug("set status", "thread", j.thread.Key(), "err", err)
		}
	case jobAsk:
		if err := j.ctx.Err(); err != nil {
			j.done <- askResult{err: err} // nobody waits for it any more
			return
		}
		ref, err := mr.pl.Ask(j.ctx, j.thread, j.prompt)
		j.done <- askResult{ref: ref, err: err}
	case jobFile:
		j.done <- mr.postFile(j)
	}
}

// platformID is the platform's id for id: id itself unless it is
// provisional; known reports a provisional id, whose platform id is "" when
// its post failed (or it is too old to be kept).
func (mr *Mailroom) platformID(l *lane, id string) (pid string, known bool) {
	if !strings.HasPrefix(id, provisional) {
		return id, false
	}
	mr.mu.Lock()
	defer mr.mu.Unlock()
	return l.resolved[id], true
}

func (mr *Mailroom) resolve(l *lane, id, pid string, err error) {
	if err != nil {
		mr.log.Warn("post message", "thread", l.thread.Key(), "err", err)
		pid = ""
	} else if mr.posted != nil {
		defer mr.posted(l.thread, id) // once Posted says so too
	}
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if _, ok := l.resolved[id]; !ok {
		l.order = append(l.order, id)
		if len(l.order) > maxResolved {
			delete(l.resolved, l.order[0])
			l.order = l.order[1:]
		}
	}
	l.resolved[id] = pid
}
