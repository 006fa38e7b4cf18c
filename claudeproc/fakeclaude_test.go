package claudeproc

// A fake `claude` for fault tests: the test binary re-executes itself (as
// os/exec's own tests do) with CLAUDEOPS_FAKE_CLAUDE=<mode> in its
// environment, and TestMain then plays the CLI instead of running tests.
// It ignores its command line (the stream-json flags Options.Args builds).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeEnv selects the fake CLI and its mode.
const fakeEnv = "CLAUDEOPS_FAKE_CLAUDE"

// Modes of the fake CLI. Unless a mode says otherwise the fake behaves like
// the real one: nothing before the first stdin line, per user message a
// system/init, a stream_event with text, an assistant line and a result;
// control requests answered with success; exit 0 at stdin EOF; exit 1 on an
// invalid or partial stdin line. Every control_request line it gets is
// written to stderr ("fake: control_request <line>").
const (
	// fakeBasic: a message with text "hold" keeps its turn open until an
	// interrupt arrives, which ends it with error_during_execution.
	fakeBasic = "basic"
	// fakeCrashExit: the turn streams some text, then waits; the next
	// interrupt is not answered: the fake writes to stderr and exits 3.
	fakeCrashExit = "crash-exit"
	// fakeCrashKill: as fakeCrashExit, but it kills itself with SIGKILL.
	fakeCrashKill = "crash-kill"
	// fakeCrashNow: the turn streams some text, then the fake exits 3 at
	// once.
	fakeCrashNow = "crash-now"
	// fakeStderrFlood: the first message also starts writing
	// fakeFloodBytes to stderr, ending with fakeFloodEnd; then it prints
	// {"type":"fake_flood_done"} on stdout. Turns go on meanwhile.
	fakeStderrFlood = "stderr-flood"
	// fakeIgnoreTerm ignores SIGTERM and stdin EOF.
	fakeIgnoreTerm = "ignore-term"
	// fakeGrandchild: the first message starts `sleep 300` (same process
	// group, holding stdout and stderr), prints
	// {"type":"fake_grandchild","pid":N} and exits 0.
	fakeGrandchild = "grandchild"
	// fakeGrandchildStay: as fakeGrandchild, but the fake stays until
	// stdin EOF.
	fakeGrandchildStay = "grandchild-stay"
	// fakeGrandchildSetsid: as fakeGrandchild, but the sleep escapes the
	// process group with setsid.
	fakeGrandchildSetsid = "grandchild-setsid"
	// fakeMuteControl never answers control requests at once; it answers
	// the ones it got (late) when the next user message comes.
	fakeMuteControl = "mute-control"
	// fakeGarbage: each turn prints, between init and result, a malformed
	// line, a line of an unknown type, a fakeHugeLine-byte user line and an
	// unknown system subtype.
	fakeGarbage = "garbage"
	// fakeEcho answers each user message with {"type":"fake_echo",
	// "text":<text>} and nothing else; control requests are answered, with
	// set_model / set_permission_mode echoing the value asked for.
	fakeEcho = "echo"
	// fakeAsks: the message "big-ask" makes the fake ask can_use_tool for
	// a Write of fakeBigInput bytes, "future-ask" a control request of a
	// subtype no bot knows (fakeasks_test.go); the fake then waits for the
	// answer, prints it ({"type":"fake_answer","answer":<line>}) and ends
	// the turn.
	fakeAsks = "asks"
)

const (
	fakeFloodBytes = 200 << 20
	fakeFloodEnd   = "fake: flood done, this is the last line\n"
	fakeHugeLine   = 1 << 20
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFakeClaude(mode))
	}
	if mode := os.Getenv(fakeBotEnv); mode != "" {
		os.Exit(runFakeBot(mode)) // supervise_test.go
	}
	// Report exec.Cmds that were started and never waited for. Set here,
	// before any test, so it affects only this test binary.
	godebug := os.Getenv("GODEBUG")
	if godebug != "" {
		godebug += ","
	}
	os.Setenv("GODEBUG", godebug+"execwait=2")
	code := m.Run()
	// Give the execwait finalizers a chance to see a leaked Cmd.
	runtime.GC()
	runtime.GC()
	os.Exit(code)
}

type fakeCLI struct {
	mode    string
	outMu   sync.Mutex
	out     *bufio.Writer
	session string
	turns   int
	holding bool     // a turn waits for an interrupt
	late    []string // control request ids not answered yet (mute-control)
	flood   sync.Once
}

type fakeInput struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

func runFakeClaude(mode string) int {
	f := &fakeCLI{
		mode:    mode,
		out:     bufio.NewWriterSize(os.Stdout, 64<<10),
		session: fmt.Sprintf("fake-%d", os.Getpid()),
	}
	if mode == fakeIgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				fmt.Fprintf(os.Stderr, "fake: partial stdin line at EOF (%d bytes)\n", len(line))
				return 1
			}
			if !json.Valid(line) {
				fmt.Fprintf(os.Stderr, "fake: invalid JSON on stdin: %.200q\n", line)
				return 1
			}
			var msg fakeInput
			if err := json.Unmarshal(line, &msg); err != nil {
				fmt.Fprintf(os.Stderr, "fake: bad stdin line: %v\n", err)
				return 1
			}
			if code, exit := f.handle(&msg, bytes.TrimSpace(line)); exit {
				return code
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake: stdin closed")
			if mode == fakeIgnoreTerm {
				fmt.Fprintln(os.Stderr, "fake: staying alive anyway")
				time.Sleep(time.Hour)
			}
			return 0
		}
	}
}

// emit writes one stdout line and flushes it.
func (f *fakeCLI) emit(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	f.emitRaw(b)
}

func (f *fakeCLI) emitRaw(b []byte) {
	f.outMu.Lock()
	defer f.outMu.Unlock()
	f.out.Write(b)
	f.out.WriteByte('\n')
	if err := f.out.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "fake: stdout: %v\n", err)
		os.Exit(1)
	}
}

func (f *fakeCLI) handle(msg *fakeInput, line []byte) (code int, exit bool) {
	switch msg.Type {
	case "user":
		return f.userMessage(msg)
	case "control_request":
		fmt.Fprintf(os.Stderr, "fake: control_request %s\n", line)
		return f.controlRequest(msg)
	case "control_response":
		if f.mode == fakeAsks && f.holding {
			f.answered(line)
		}
	}
	return 0, false // control_response etc.: ignored, as the CLI does
}

func (f *fakeCLI) userMessage(msg *fakeInput) (int, bool) {
	var text string
	if err := json.Unmarshal(msg.Message.Content, &text); err != nil {
		text = string(msg.Message.Content)
	}
	switch f.mode {
	case fakeEcho:
		f.emit(map[string]any{"type": "fake_echo", "text": text})
		return 0, false
	case fakeMuteControl:
		for _, id := range f.late {
			f.controlSuccess(id, map[string]any{"late": true})
		}
		f.late = nil
	}
	f.turns++
	f.emit(map[string]any{"type": "system", "subtype": "init", "session_id": f.session,
		"cwd": "/fake", "model": "fake-model", "permissionMode": "default",
		"tools": []string{"Bash"}, "claude_code_version": "0.0.0-fake"})
	f.streamText("working on " + text)

	switch f.mode {
	case fakeCrashExit, fakeCrashKill:
		fmt.Fprintln(os.Stderr, "fake: turn started, waiting for an interrupt to crash on")
		f.holding = true
		return 0, false
	case fakeCrashNow:
		fmt.Fprintln(os.Stderr, "fake: crashing mid-turn with code 3")
		return 3, true
	case fakeStderrFlood:
		f.flood.Do(func() { go f.floodStderr() })
	case fakeGrandchild, fakeGrandchildStay, fakeGrandchildSetsid:
		cmd := exec.Command("sleep", "300")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if f.mode == fakeGrandchildSetsid {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "fake: start grandchild: %v\n", err)
			return 4, true
		}
		fmt.Fprintf(os.Stderr, "fake: grandchild pid %d\n", cmd.Process.Pid)
		f.emit(map[string]any{"type": "fake_grandchild", "pid": cmd.Process.Pid})
		if f.mode != fakeGrandchildStay {
			return 0, true
		}
	case fakeGarbage:
		f.emitRaw([]byte(`{"type":"assistant","message":{"id":"msg_cut","content":[{"type":"text","text":"cut off`))
		f.emitRaw([]byte(`{"type":"fake_unknown_type","payload":{"a":[1,2,3]}}`))
		f.emitRaw(fakeHugeUserLine(fakeHugeLine))
		f.emitRaw([]byte(`{"type":"system","subtype":"fake_new_subtype","session_id":"` + f.session + `"}`))
	}
	if f.mode == fakeAsks && f.ask(text) {
		f.holding = true
		return 0, false
	}
	if text == "hold" {
		f.holding = true
		return 0, false
	}
	f.finishTurn("success", false, "done: "+text)
	return 0, false
}

func (f *fakeCLI) controlRequest(msg *fakeInput) (int, bool) {
	var req struct {
		Subtype string `json:"subtype"`
		Model   string `json:"model"`
		Mode    string `json:"mode"`
	}
	_ = json.Unmarshal(msg.Request, &req)
	switch f.mode {
	case fakeMuteControl:
		f.late = append(f.late, msg.RequestID)
		return 0, false
	case fakeCrashExit, fakeCrashKill:
		if req.Subtype == "interrupt" && f.holding {
			fmt.Fprintln(os.Stderr, "fake: got the interrupt, crashing without an answer")
			if f.mode == fakeCrashKill {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				time.Sleep(time.Hour) // not reached
			}
			return 3, true
		}
	}
	switch req.Subtype {
	case "interrupt":
		f.controlSuccess(msg.RequestID, map[string]any{"still_queued": []string{}})
		if f.holding {
			f.finishTurn("error_during_execution", true, "")
		}
	case "set_model":
		f.controlSuccess(msg.RequestID, map[string]any{"model": req.Model})
	case "set_permission_mode":
		f.controlSuccess(msg.RequestID, map[string]any{"mode": req.Mode})
	case "initialize":
		f.controlSuccess(msg.RequestID, map[string]any{"pid": os.Getpid(), "claude_code_version": "0.0.0-fake"})
	default:
		f.emit(map[string]any{"type": "control_response", "response": map[string]any{
			"subtype": "error", "request_id": msg.RequestID,
			"error":      "Unsupported control request subtype: " + req.Subtype,
			"error_code": "unsupported_request"}})
	}
	return 0, false
}

func (f *fakeCLI) controlSuccess(id string, response any) {
	f.emit(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": id, "response": response}})
}

func (f *fakeCLI) streamText(s string) {
	f.emit(map[string]any{"type": "stream_event", "session_id": f.session, "uuid": "u-stream",
		"api_message_id": "msg_fake", "parent_tool_use_id": nil,
		"event": map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": s}}})
}

func (f *fakeCLI) finishTurn(subtype string, isError bool, result string) {
	f.holding = false
	terminal := "completed"
	if isError {
		terminal = "aborted_streaming"
	}
	f.emit(map[string]any{"type": "result", "subtype": subtype, "is_error": isError,
		"result": result, "terminal_reason": terminal, "num_turns": f.turns,
		"session_id": f.session})
}

func (f *fakeCLI) floodStderr() {
	chunk := []byte(strings.Repeat("fake: stderr flood 0123456789abcdefghijklmnopqrstuvwxyz\n", (1<<20)/56))
	written := 0
	for written < fakeFloodBytes {
		n, err := os.Stderr.Write(chunk)
		if err != nil {
			os.Exit(5)
		}
		written += n
	}
	n, _ := os.Stderr.WriteString(fakeFloodEnd)
	f.emit(map[string]any{"type": "fake_flood_done", "bytes": written + n})
}

// fakeHugeUserLine is a valid tool-result echo of exactly n bytes.
func fakeHugeUserLine(n int) []byte {
	head := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_huge","content":"`
	tail := `","is_error":false}]},"session_id":"fake","uuid":"u-huge"}`
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte("x"), n-len(head)-len(tail))...)
	return append(b, tail...)
}
