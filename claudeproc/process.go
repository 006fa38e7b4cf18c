package claudeproc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"
)

// ExitInfo says how a process ended.
type ExitInfo struct {
	Code   int    // exit code, -1 if killed by a signal
	Signal string // the signal that killed it, if any
	// Reason is a short human summary: "exited 0", "killed by SIGKILL after
	// ignoring SIGTERM", "failed to start: ...".
	Reason string
	// StderrTail is the last part of what the process wrote on stderr.
	StderrTail string
	Err        error
}

// ErrExited is returned by writes and requests after the process is gone.
var ErrExited = errors.New("claude process has exited")

// Process is one running `claude`. Its methods are safe for concurrent use.
// Events must be drained by the owner until it is closed; the last event is
// always *Exited.
type Process struct {
	opts   Options
	log    *slog.Logger
	handle Handle

	stdinMu sync.Mutex
	stdin   io.WriteCloser
	closed  bool // stdin closed

	stdout *os.File
	stderr *ringBuffer

	events *eventQueue

	mu       sync.Mutex
	pending  map[string]chan *ControlResponse
	nextID   uint64
	idPrefix string
	inTurn   bool
	gone     bool // reaped: no new control requests

	unknownSeen map[string]bool // control request subtypes refused (reader only)

	exited   chan struct{} // closed when the process has been reaped
	exitInfo ExitInfo

	stopOnce  sync.Once
	termState string // set by Close: which signal ended it
}

// Start spawns the CLI. It does not wait for any output: the CLI prints
// nothing until it gets its first line on stdin.
func Start(ctx context.Context, opts Options) (*Process, error) {
	if err := opts.checkGuard(); err != nil {
		return nil, err
	}
	if opts.Bin == "" {
		opts.Bin = "claude"
	}
	if opts.StderrBytes <= 0 {
		opts.StderrBytes = 64 << 10
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 5 * time.Second
	}
	if opts.EventBuffer <= 0 {
		opts.EventBuffer = 4096
	}
	if opts.Env == nil {
		opts.Env = BuildEnv(os.Environ(), nil)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	runner := opts.Runner
	if runner == nil {
		runner = Local{}
	}
	opts.loadAgents(log)

	mcpConfig, err := opts.mcpConfigPipe(runner)
	if err != nil {
		return nil, err
	}
	// Our own pipes: the child gets *os.File ends, so exec.Cmd starts no
	// copying goroutines and Wait returns when the process exits even if a
	// grandchild still holds stdout.
	inR, inW, err := os.Pipe()
	if err != nil {
		closeFiles(mcpConfig)
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW, mcpConfig)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW, outR, outW, mcpConfig)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	// Built last: removed when the start fails or the process ends.
	opts.loadSkills(log, runner)
	// The runner owns the child's ends from here on.
	h, err := runner.Start(ctx, Spec{
		Bin: opts.Bin, Args: opts.Args(), Dir: opts.Dir, Env: opts.Env, Session: opts.Session,
		Mounts: opts.Mounts, Progress: opts.Progress, Image: opts.Image,
		Stdin: inR, Stdout: outW, Stderr: errW, MCPConfig: mcpConfig,
	})
	if err != nil {
		closeFiles(inW, outR, errR)
		opts.removeSkills(log)
		return nil, err
	}

	var idb [4]byte
	_, _ = rand.Read(idb[:])
	p := &Process{
		opts:        opts,
		log:         log.With("claude", h.Name()),
		handle:      h,
		stdin:       inW,
		stdout:      outR,
		stderr:      newRingBuffer(opts.StderrBytes),
		events:      newEventQueue(opts.EventBuffer),
		pending:     make(map[string]chan *ControlResponse),
		unknownSeen: make(map[string]bool),
		idPrefix:    "co_" + hex.EncodeToString(idb[:]) + "_",
		exited:      make(chan struct{}),
	}
	p.log.Debug("claude started", "bin", opts.Bin, "args", opts.Args(), "dir", opts.Dir)

	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		p.drainStderr(errR)
	}()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		p.readLoop()
	}()
	go p.wait(readDone, stderrDone, errR)
	return p, nil
}

// Events delivers the process's events in order. The channel is closed after
// the final *Exited event.
func (p *Process) Events() <-chan Event { return p.events.out }

// Exited is closed as soon as the process has been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitInfo is valid once Exited is closed.
func (p *Process) ExitInfo() ExitInfo {
	<-p.exited
	return p.exitInfo
}

// Pid of the CLI (also its process group id) when it is a child process
// of ours; 0 when a runner put it elsewhere.
func (p *Process) Pid() int {
	if l, ok := p.handle.(interface{ Pid() int }); ok {
		return l.Pid()
	}
	return 0
}

// StderrTail returns what is kept of stderr so far.
func (p *Process) StderrTail() string { return p.stderr.String() }

// InTurn reports whether a turn is running: a message was sent or a turn
// started (system/init) and its result has not come yet.
func (p *Process) InTurn() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inTurn
}

func (p *Process) readLoop() {
	rd := NewReader(p.stdout, p.opts.MaxLineBytes, p.log)
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				p.log.Warn("claude: reading stdout failed", "err", err)
			}
			return
		}
		p.refuseTruncated(ev)
		p.refuseMalformed(ev)
		if p.screenMCP(ev) || p.decideSkill(ev) || p.refuseUnknown(ev) {
			continue
		}
		switch e := ev.(type) {
		case *ControlResponse:
			p.mu.Lock()
			ch, ok := p.pending[e.RequestID]
			delete(p.pending, e.RequestID)
			p.mu.Unlock()
			if ok {
				ch <- e // buffered, never blocks
				continue
			}
		case *SystemInit:
			p.setInTurn(true)
		case *Result:
			p.setInTurn(false)
		}
		p.events.push(ev)
	}
}

func (p *Process) setInTurn(v bool) {
	p.mu.Lock()
	p.inTurn = v
	p.mu.Unlock()
}

func (p *Process) drainStderr(r *os.File) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.stderr.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// wait reaps the process, then makes sure nothing of it survives: the
// process group is killed (tools it left behind) and stdout is closed if a
// stray holder keeps it open. Then the final event is queued.
func (p *Process) wait(readDone, stderrDone chan struct{}, stderrR *os.File) {
	st, err := p.handle.Wait()
	p.stdinMu.Lock()
	p.closed = true
	p.stdin.Close()
	p.stdinMu.Unlock()

	// The reader ends at EOF once every writer of stdout is gone. A process
	// that escaped the group could keep it open: stop waiting after a grace.
	deadline := time.Now().Add(p.opts.StopGrace)
	select {
	case <-readDone:
	case <-time.After(p.opts.StopGrace):
		p.log.Warn("claude: stdout still open after exit; closing it")
		p.stdout.Close()
		<-readDone
	}
	p.stdout.Close()
	// Such a process usually holds stderr too. Give up on it by the same
	// deadline (and within a second), and close it so that the drain ends
	// and the tail is final.
	stderrWait := time.NewTimer(min(time.Until(deadline), time.Second))
	select {
	case <-stderrDone:
	case <-stderrWait.C:
		stderrR.Close()
		<-stderrDone
	}
	stderrWait.Stop()

	info := ExitInfo{Code: st.Code, StderrTail: p.stderr.String(), Err: err}
	if st.Signal != 0 {
		info.Signal = signalName(st.Signal)
	}
	p.mu.Lock()
	midTurn := p.inTurn
	term := p.termState
	pend := p.pending
	p.pending = map[string]chan *ControlResponse{}
	p.gone = true
	p.mu.Unlock()
	switch {
	case st.Reason != "":
		info.Reason = st.Reason
	case info.Signal != "" && term != "":
		info.Reason = fmt.Sprintf("killed by %s (%s)", info.Signal, term)
	case info.Signal != "":
		info.Reason = "killed by " + info.Signal
	default:
		info.Reason = fmt.Sprintf("exited with code %d", info.Code)
	}
	p.exitInfo = info
	p.opts.removeSkills(p.log)
	close(p.exited)
	for _, ch := range pend {
		close(ch)
	}
	lvl := slog.LevelInfo
	if midTurn || info.Code != 0 {
		lvl = slog.LevelWarn
	}
	p.log.Log(context.Background(), lvl, "claude exited", "reason", info.Reason, "mid_turn", midTurn, "stderr_tail", lastLines(info.StderrTail, 5))
	p.events.push(&Exited{Info: info, MidTurn: midTurn})
	p.events.close()
}

// writeLine marshals v and writes it as one line. Lines are never
// interleaved: a partial line would kill the CLI.
func (p *Process) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	b = append(b, '\n')
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.closed {
		return ErrExited
	}
	if _, err := p.stdin.Write(b); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			// The CLI has died and is not reaped yet.
			return fmt.Errorf("write to claude stdin: %w (%w)", ErrExited, err)
		}
		return fmt.Errorf("write to claude stdin: %w", err)
	}
	return nil
}

func lastLines(s string, n int) string {
	end := len(s)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' && i != len(s)-1 {
			n--
			if n == 0 {
				return s[i+1 : end]
			}
		}
	}
	return s
}
