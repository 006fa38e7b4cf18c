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
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Options configure one process. The zero value runs `claude` from PATH in
// the current directory with an environment built from this process's own
// by the allowlist (see BuildEnv).
type Options struct {
	// Bin is the CLI executable; default "claude" (looked up in PATH).
	Bin string
	// Dir is the working directory of the session.
	Dir string
	// Resume continues a stored session (--resume); ForkSession copies it
	// into a new session id instead (--fork-session).
	Resume      string
	ForkSession bool
	// SessionID presets the id of a new session (--session-id).
	SessionID          string
	Model              string
	PermissionMode     string
	AppendSystemPrompt string
	AllowedTools       []string
	DisallowedTools    []string
	MaxTurns           int
	// Guard, when set, keeps tool decisions with the host; see Guard.
	Guard *Guard
	// Runner starts the CLI; nil is Local{}, a child process of ours.
	Runner Runner
	// Session names the session to the runner.
	Session Session
	// ExtraArgs are appended to the command line as they are.
	ExtraArgs []string
	// Env is the child's whole environment. Nil means BuildEnv(os.Environ(), nil).
	Env []string
	// MaxLineBytes caps one stdout line; default DefaultMaxLineBytes.
	MaxLineBytes int
	// StderrBytes is how much of stderr's tail is kept; default 64 KiB.
	StderrBytes int
	// RequestTimeout bounds our control requests when the caller's context
	// has no earlier deadline; default 30 s.
	RequestTimeout time.Duration
	// StopGrace is how long each shutdown step waits (after closing stdin,
	// after SIGTERM); default 5 s.
	StopGrace time.Duration
	// EventBuffer is how many events may wait for the consumer before the
	// reader stops reading stdout (and so the CLI blocks); default 4096.
	EventBuffer int
	Logger      *slog.Logger
}

// Args returns the CLI arguments for o: the stream-json flags the protocol
// needs, then the session options.
func (o *Options) Args() []string {
	args := []string{
		"-p",
		"--output-format", "stream-json",
		"--input-format", "stream-json",
		"--verbose",
		"--permission-prompt-tool", "stdio",
		"--include-partial-messages",
	}
	if o.Resume != "" {
		args = append(args, "--resume", o.Resume)
		if o.ForkSession {
			args = append(args, "--fork-session")
		}
	}
	if o.SessionID != "" {
		args = append(args, "--session-id", o.SessionID)
	}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.Guard != nil {
		args = append(args, o.Guard.args(o.PermissionMode)...)
	} else if o.PermissionMode != "" {
		args = append(args, "--permission-mode", o.PermissionMode)
	}
	if o.AppendSystemPrompt != "" {
		args = append(args, "--append-system-prompt", o.AppendSystemPrompt)
	}
	if len(o.AllowedTools) > 0 {
		args = append(args, "--allowedTools")
		args = append(args, o.AllowedTools...)
	}
	if len(o.DisallowedTools) > 0 {
		args = append(args, "--disallowedTools")
		args = append(args, o.DisallowedTools...)
	}
	if o.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(o.MaxTurns))
	}
	return append(args, o.ExtraArgs...)
}

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

// ErrTimeout is returned when a control request got no response in time.
var ErrTimeout = errors.New("control request timed out")

// ControlError is a control_response with subtype "error".
type ControlError struct {
	Subtype string // the request's subtype
	Message string
	Code    string // e.g. invalid_mode, bypass_not_launched, unsupported_request
}

func (e *ControlError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Subtype, e.Message, e.Code)
	}
	return fmt.Sprintf("%s: %s", e.Subtype, e.Message)
}

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

	// Our own pipes: the child gets *os.File ends, so exec.Cmd starts no
	// copying goroutines and Wait returns when the process exits even if a
	// grandchild still holds stdout.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW, outR, outW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	// The runner owns the child's ends from here on.
	h, err := runner.Start(ctx, Spec{
		Bin: opts.Bin, Args: opts.Args(), Dir: opts.Dir, Env: opts.Env, Session: opts.Session,
		Stdin: inR, Stdout: outW, Stderr: errW,
	})
	if err != nil {
		closeFiles(inW, outR, errR)
		return nil, err
	}

	var idb [4]byte
	_, _ = rand.Read(idb[:])
	p := &Process{
		opts:     opts,
		log:      log.With("claude", h.Name()),
		handle:   h,
		stdin:    inW,
		stdout:   outR,
		stderr:   newRingBuffer(opts.StderrBytes),
		events:   newEventQueue(opts.EventBuffer),
		pending:  make(map[string]chan *ControlResponse),
		idPrefix: "co_" + hex.EncodeToString(idb[:]) + "_",
		exited:   make(chan struct{}),
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
	case info.Signal != "" && term != "":
		info.Reason = fmt.Sprintf("killed by %s (%s)", info.Signal, term)
	case info.Signal != "":
		info.Reason = "killed by " + info.Signal
	default:
		info.Reason = fmt.Sprintf("exited with code %d", info.Code)
	}
	p.exitInfo = info
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

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}

// Close ends the process in bounded time: it interrupts a running turn,
// closes stdin (the CLI exits once idle), then sends SIGTERM and finally
// SIGKILL to the whole process group, waiting StopGrace between steps. It
// returns how the process ended. Safe to call more than once.
func (p *Process) Close(ctx context.Context) ExitInfo {
	p.stopOnce.Do(func() { p.stop(ctx) })
	return p.ExitInfo()
}

func (p *Process) stop(ctx context.Context) {
	select {
	case <-p.exited:
		return
	default:
	}
	grace := p.opts.StopGrace
	if p.InTurn() {
		ictx, cancel := context.WithTimeout(ctx, min(grace, 2*time.Second))
		if _, err := p.Interrupt(ictx, true); err != nil {
			p.log.Debug("claude: interrupt before close failed", "err", err)
		}
		cancel()
	}
	p.closeStdin()
	if p.waitExit(ctx, grace) {
		return
	}
	p.setTerm("sent SIGTERM after stdin close was not enough")
	p.signalGroup(syscall.SIGTERM)
	if p.waitExit(ctx, grace) {
		return
	}
	p.setTerm("ignored SIGTERM for " + grace.String())
	p.signalGroup(syscall.SIGKILL)
	<-p.exited
}

func (p *Process) setTerm(s string) {
	p.mu.Lock()
	p.termState = s
	p.mu.Unlock()
}

// Kill ends the process group at once with SIGKILL.
func (p *Process) Kill() {
	p.setTerm("killed")
	p.signalGroup(syscall.SIGKILL)
	<-p.exited
}

// signalGroup signals everything of the session (the runner knows what
// that is, and does nothing once the process has been reaped).
func (p *Process) signalGroup(sig syscall.Signal) {
	if err := p.handle.Signal(sig); err != nil {
		p.log.Debug("claude: signal failed", "signal", signalName(sig), "err", err)
	}
}

func (p *Process) waitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (p *Process) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if !p.closed {
		p.closed = true
		p.stdin.Close()
	}
}

// CloseInput closes stdin: the CLI finishes the running turn and exits.
func (p *Process) CloseInput() { p.closeStdin() }

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

func (p *Process) newRequestID(kind string) string {
	p.mu.Lock()
	p.nextID++
	n := p.nextID
	p.mu.Unlock()
	return p.idPrefix + kind + "_" + strconv.FormatUint(n, 10)
}

// request sends one of our control requests and waits for its response.
func (p *Process) request(ctx context.Context, subtype string, body map[string]any) (json.RawMessage, error) {
	id := p.newRequestID(subtype)
	ch := make(chan *ControlResponse, 1)
	p.mu.Lock()
	if p.gone {
		p.mu.Unlock()
		return nil, fmt.Errorf("%s request: %w", subtype, ErrExited)
	}
	p.pending[id] = ch
	p.mu.Unlock()
	forget := func() {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
	}

	req := map[string]any{"subtype": subtype}
	for k, v := range body {
		req[k] = v
	}
	if err := p.writeLine(map[string]any{"type": "control_request", "request_id": id, "request": req}); err != nil {
		forget()
		return nil, fmt.Errorf("send %s request: %w", subtype, err)
	}
	timer := time.NewTimer(p.opts.RequestTimeout)
	defer timer.Stop()
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s request: %w", subtype, ErrExited)
		}
		if resp.Subtype == "error" {
			return nil, &ControlError{Subtype: subtype, Message: resp.Error, Code: resp.ErrorCode}
		}
		return resp.Response, nil
	case <-timer.C:
		forget()
		return nil, fmt.Errorf("%s request %s: %w after %s", subtype, id, ErrTimeout, p.opts.RequestTimeout)
	case <-ctx.Done():
		forget()
		return nil, fmt.Errorf("%s request %s: %w", subtype, id, ctx.Err())
	}
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
