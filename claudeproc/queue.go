package claudeproc

import (
	"bytes"
	"sync"
)

// eventQueue decouples the stdout reader from the consumer, so that a
// consumer busy in a control request (which needs the reader to route the
// response) does not deadlock with the reader. It holds up to limit events;
// past that the reader waits, which in turn makes the CLI wait on its pipe.
type eventQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []Event
	limit  int
	closed bool
	out    chan Event
}

func newEventQueue(limit int) *eventQueue {
	q := &eventQueue{limit: limit, out: make(chan Event)}
	q.cond = sync.NewCond(&q.mu)
	go q.pump()
	return q
}

func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	for len(q.items) >= q.limit {
		q.cond.Wait()
	}
	q.items = append(q.items, ev)
	q.cond.Broadcast()
	q.mu.Unlock()
}

// close ends the queue after the events already pushed.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// pump owns out: it delivers in order and closes out after the last event.
func (q *eventQueue) pump() {
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.items) == 0 {
			q.mu.Unlock()
			close(q.out)
			return
		}
		ev := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		if len(q.items) == 0 {
			q.items = q.items[:0:0] // let the backing array go
		}
		q.cond.Broadcast()
		q.mu.Unlock()
		q.out <- ev
	}
}

// ringBuffer keeps the last n bytes written to it.
type ringBuffer struct {
	mu    sync.Mutex
	buf   []byte
	n     int
	total int64
}

func newRingBuffer(n int) *ringBuffer { return &ringBuffer{n: n} }

func (r *ringBuffer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(len(p))
	if len(p) >= r.n {
		r.buf = append(r.buf[:0], p[len(p)-r.n:]...)
		return len(p), nil
	}
	if over := len(r.buf) + len(p) - r.n; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
	return len(p), nil
}

// String returns the kept tail, starting at a line boundary when it was cut.
func (r *ringBuffer) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buf
	if r.total > int64(len(b)) {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return string(b)
}
