package bot

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
)

// fakeProc: the fake claude process the replay tests run the bot against.

// replayAnswer is what the bot wrote for a can_use_tool.
type replayAnswer struct {
	RequestID string
	Allow     bool
	Input     json.RawMessage
	Message   string
	Interrupt bool
}

// fakeProc is a claude process that replays a transcript: one turn per
// Send (up to and including its result), pausing where the transcript had a
// can_use_tool until the bot answers, and reporting the lifecycle of every
// message sent with a uuid as the real CLI does.
type fakeProc struct {
	ctx     context.Context
	opts    claudeproc.Options
	steps   []replayStep
	repeat  bool // start over when the transcript ends
	crashAt int  // exit mid-turn before this step (-1: never)
	// interruptErr, when set, is what every Interrupt returns.
	interruptErr error
	endExit      *claudeproc.ExitInfo  // exit after the last replayStep
	events       chan claudeproc.Event // unbuffered: a sent event has been received
	kick         chan struct{}
	changed      chan struct{}
	done         chan struct{}

	mu         sync.Mutex
	cursor     int
	inTurn     bool
	turnUUID   string
	credits    []string // uuids of messages sent and not yet taken up
	synth      []claudeproc.Event
	sends      []claudeproc.UserMessage
	answers    map[string]replayAnswer
	answerLog  []replayAnswer
	interrupts []chan claudeproc.InterruptResult
	gateWait   string // the request id the replay waits an answer for
	closing    bool
	crash      bool
	stopping   bool // the process is exiting: Exited comes next
	exitMid    bool
	exitInfo   claudeproc.ExitInfo
	stopped    chan struct{}
	watching   map[chan struct{}]bool
	waiting    string // what the replay waits for: send, replayAnswer, interrupt, hold, end
	waitSeq    int
}

// crashInfo is how the fake says it crashed.
var crashInfo = claudeproc.ExitInfo{Code: 1, Reason: "exited with code 1", StderrTail: "boom"}

func newFakeProc(ctx context.Context, o claudeproc.Options, steps []replayStep) *fakeProc {
	f := &fakeProc{
		ctx: ctx, opts: o, steps: steps, crashAt: -1,
		events:   make(chan claudeproc.Event),
		kick:     make(chan struct{}, 1),
		changed:  make(chan struct{}, 1),
		done:     make(chan struct{}),
		stopped:  make(chan struct{}),
		answers:  make(map[string]replayAnswer),
		watching: make(map[chan struct{}]bool),
	}
	return f
}

func (f *fakeProc) run() { go f.play() }

func (f *fakeProc) poke() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func (f *fakeProc) notify() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// sessionID is the id the process runs under: the one it was given, as the
// real CLI keeps it.
func (f *fakeProc) sessionID() string {
	if f.opts.Resume != "" {
		return f.opts.Resume
	}
	return f.opts.SessionID
}

func (f *fakeProc) play() {
	defer close(f.done)
	defer close(f.events)
	for {
		f.mu.Lock()
		ev, commit, final := f.next()
		f.mu.Unlock()
		if ev == nil {
			select {
			case <-f.kick:
				continue
			case <-f.ctx.Done():
				return
			}
		}
		select {
		case f.events <- ev:
			f.mu.Lock()
			if commit != nil {
				commit()
			}
			f.mu.Unlock()
			f.notify()
			if final {
				return
			}
		case <-f.kick:
		case <-f.ctx.Done():
			return
		}
	}
}

func (f *fakeProc) wait(what string) {
	if f.waiting != what {
		f.waiting = what
		f.waitSeq++
		go f.notify()
	}
}

// checkStopping starts the exit when the replay crashes, reaches its
// exit, or is closed. Called with mu held.
func (f *fakeProc) checkStopping() {
	crashing := f.crash || (f.crashAt > 0 && f.cursor == f.crashAt)
	atEnd := f.endExit != nil && f.cursor == len(f.steps)
	if !crashing && !atEnd && !f.closing {
		return
	}
	f.stopping = true
	f.exitMid = f.inTurn || crashing
	switch {
	case crashing:
		f.exitInfo = crashInfo
	case atEnd:
		f.exitInfo = *f.endExit
	default:
		f.exitInfo = claudeproc.ExitInfo{Code: 0, Reason: "exited 0"}
	}
	for _, c := range f.interrupts {
		close(c)
	}
	f.interrupts = nil
	close(f.stopped)
}

// next decides the next event to emit (nil: wait for a poke). commit runs
// once it was received; final ends the replay. Called with mu held.
func (f *fakeProc) next() (ev claudeproc.Event, commit func(), final bool) {
	for {
		if !f.stopping {
			f.checkStopping()
		}
		if f.stopping {
			f.waiting = ""
			return &claudeproc.Exited{Info: f.exitInfo, MidTurn: f.exitMid}, nil, true
		}
		if len(f.synth) > 0 {
			f.waiting = ""
			return f.synth[0], func() { f.synth = f.synth[1:] }, false
		}
		if f.cursor == len(f.steps) {
			if f.repeat && len(f.steps) > 0 {
				f.cursor = 0
				continue
			}
			f.answerInterrupts()
			f.wait("end")
			return nil, nil, false
		}
		s := f.steps[f.cursor]
		if s.hold != nil {
			select {
			case <-s.hold:
			default:
				f.wait("hold")
				if !f.watching[s.hold] {
					f.watching[s.hold] = true
					go func() {
						select {
						case <-s.hold:
							f.poke()
						case <-f.ctx.Done():
						}
					}()
				}
				return nil, nil, false
			}
		}
		if !f.inTurn {
			if s.needSend {
				if len(f.credits) == 0 {
					f.answerInterrupts()
					f.wait("send")
					return nil, nil, false
				}
				f.inTurn, f.turnUUID = true, f.credits[0]
				f.credits = f.credits[1:]
				if f.turnUUID != "" {
					f.synth = append(f.synth, f.lifecycle(f.turnUUID, "started"))
				}
				continue
			}
			// A turn the CLI starts by itself (a background task finished).
			f.inTurn, f.turnUUID = true, ""
		}
		if s.gate != "" {
			if _, ok := f.answers[s.gate]; !ok {
				f.gateWait = s.gate
				f.wait("answer")
				return nil, nil, false
			}
		}
		if s.reply {
			if len(f.interrupts) == 0 {
				f.wait("interrupt")
				return nil, nil, false
			}
			f.interrupts[0] <- claudeproc.InterruptResult{}
			f.interrupts = f.interrupts[1:]
			f.cursor++
			continue
		}
		f.waiting = ""
		ev := f.withSession(s.ev)
		return ev, func() {
			f.cursor++
			if _, ok := ev.(*claudeproc.Result); ok {
				if f.turnUUID != "" {
					f.synth = append(f.synth, f.lifecycle(f.turnUUID, "completed"))
				}
				f.inTurn, f.turnUUID = false, ""
			}
		}, false
	}
}

// answerInterrupts answers interrupts that no transcript line will: the
// replay is idle.
func (f *fakeProc) answerInterrupts() {
	for _, c := range f.interrupts {
		c <- claudeproc.InterruptResult{}
	}
	f.interrupts = nil
}

func (f *fakeProc) lifecycle(uuid, state string) claudeproc.Event {
	return &claudeproc.CommandLifecycle{Meta: claudeproc.Meta{SessionID: f.sessionID()}, CommandUUID: uuid, State: state}
}

// withSession gives init and result lines the process's session id.
func (f *fakeProc) withSession(ev claudeproc.Event) claudeproc.Event {
	id := f.sessionID()
	if id == "" {
		return ev
	}
	switch e := ev.(type) {
	case *claudeproc.SystemInit:
		c := *e
		c.SessionID = id
		return &c
	case *claudeproc.Result:
		c := *e
		c.SessionID = id
		return &c
	}
	return ev
}

func (f *fakeProc) Events() <-chan claudeproc.Event { return f.events }

func (f *fakeProc) Send(m claudeproc.UserMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping || f.closing || f.crash {
		return claudeproc.ErrExited
	}
	f.sends = append(f.sends, m)
	f.credits = append(f.credits, m.UUID)
	if f.waiting == "send" {
		f.waiting = "" // no longer true; the replay goes on
	}
	if m.UUID != "" {
		f.synth = append(f.synth, f.lifecycle(m.UUID, "queued"))
	}
	f.poke()
	go f.notify()
	return nil
}

func (f *fakeProc) answer(a replayAnswer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping || f.closing || f.crash {
		return claudeproc.ErrExited
	}
	f.answerLog = append(f.answerLog, a)
	if _, ok := f.answers[a.RequestID]; !ok {
		f.answers[a.RequestID] = a
	}
	if f.waiting == "answer" && f.gateWait == a.RequestID {
		f.waiting = ""
	}
	f.poke()
	go f.notify()
	return nil
}

func (f *fakeProc) Allow(id string, in json.RawMessage, _ []claudeproc.PermissionUpdate) error {
	return f.answer(replayAnswer{RequestID: id, Allow: true, Input: in})
}

func (f *fakeProc) Deny(id, msg string, interrupt bool) error {
	return f.answer(replayAnswer{RequestID: id, Message: msg, Interrupt: interrupt})
}

func (f *fakeProc) Interrupt(ctx context.Context, _ bool) (claudeproc.InterruptResult, error) {
	c := make(chan claudeproc.InterruptResult, 1)
	f.mu.Lock()
	if f.interruptErr != nil {
		f.mu.Unlock()
		return claudeproc.InterruptResult{}, f.interruptErr
	}
	if f.stopping || f.closing || f.crash {
		f.mu.Unlock()
		return claudeproc.InterruptResult{}, claudeproc.ErrExited
	}
	f.interrupts = append(f.interrupts, c)
	if f.waiting == "interrupt" {
		f.waiting = ""
	}
	f.mu.Unlock()
	f.poke()
	select {
	case r, ok := <-c:
		if !ok {
			return r, claudeproc.ErrExited
		}
		return r, nil
	case <-ctx.Done():
		return claudeproc.InterruptResult{}, ctx.Err()
	}
}

func (f *fakeProc) SetPermissionMode(_ context.Context, mode string) (string, error) {
	return mode, nil
}

func (f *fakeProc) SetModel(_ context.Context, model string) (string, error) { return model, nil }

func (f *fakeProc) RespondMCP(string, json.RawMessage) error { return nil }

func (f *fakeProc) Close(ctx context.Context) claudeproc.ExitInfo {
	f.mu.Lock()
	f.closing = true
	f.mu.Unlock()
	f.poke()
	select {
	case <-f.stopped:
	case <-ctx.Done():
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exitInfo
}

// Crash makes the process exit now, mid-turn, saying "boom" on stderr.
func (f *fakeProc) Crash() {
	f.mu.Lock()
	f.crash = true
	f.mu.Unlock()
	f.poke()
}

func (f *fakeProc) sent() []claudeproc.UserMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sends)
}

func (f *fakeProc) answered() []replayAnswer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.answerLog)
}

func (f *fakeProc) state() (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting, f.waitSeq
}

// waitFor waits until the replay waits for what (and returns its sequence
// number).
func (f *fakeProc) waitFor(t *testing.T, what string) int {
	t.Helper()
	deadline := time.After(replayWait)
	for {
		if w, seq := f.state(); w == what {
			return seq
		}
		select {
		case <-f.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			w, _ := f.state()
			t.Fatalf("the fake claude did not come to wait for %s (waits for %q)", what, w)
		}
	}
}
