package claudeproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// A Runner decides where a session's `claude` runs: a process of the bot's
// own (Local), one inside a sandbox, one in a container. The protocol engine
// (Process) is the same whatever the runner: it speaks NDJSON over the three
// pipes the runner connects to the CLI.
type Runner interface {
	// Start launches spec.Bin with spec.Args and returns once it runs. The
	// runner owns spec's three files from then on, whether Start succeeds
	// or not, and closes them when the CLI no longer needs them (at once,
	// for a local process; when the attach stream ends, for a container).
	Start(ctx context.Context, spec Spec) (Handle, error)
}

// Spec is one CLI process to start.
type Spec struct {
	// Bin is the CLI as configured; the runner resolves it where the CLI
	// will run.
	Bin  string
	Args []string
	// Dir is the session's working directory: the same path in every
	// runner, so that what Claude names in it is what the bot sees.
	Dir string
	// Env is the CLI's whole environment (BuildEnv: no bot secrets).
	Env []string
	// Session names the session for homes, logs and labels.
	Session Session
	// Stdin is the CLI's end of its input pipe; Stdout and Stderr the
	// write ends of its output pipes.
	Stdin, Stdout, Stderr *os.File
}

// Session identifies a session to a runner. Keys are the bot's own
// (e.g. "slack/T1/C1"); a runner hashes them where they may not fit.
type Session struct {
	Channel string
	Thread  string
}

// Handle is a started CLI process.
type Handle interface {
	// Name identifies it in logs ("pid 4242", "container 1f2e…").
	Name() string
	// Wait blocks until the CLI has ended, and ends whatever it left
	// behind (its process group, its sandbox, its container). Called once.
	Wait() (ExitStatus, error)
	// Signal sends sig to everything of the session. After Wait has
	// returned it does nothing: ids may name someone else's by then.
	Signal(sig syscall.Signal) error
}

// ExitStatus is how a CLI process ended.
type ExitStatus struct {
	Code   int            // -1 when killed by a signal
	Signal syscall.Signal // the signal that ended it, 0 if none
}

// Local runs the CLI as a child process of the bot, as the bot's user, in
// its own process group. Wrap, when set, rewrites the command line (a
// sandbox runner puts `bwrap … --` in front).
type Local struct {
	Wrap func(bin string, args []string, spec Spec) (string, []string, error)
}

// Start implements Runner.
func (l Local) Start(_ context.Context, spec Spec) (Handle, error) {
	defer closeFiles(spec.Stdin, spec.Stdout, spec.Stderr) // the child has its copies
	bin, err := exec.LookPath(spec.Bin)
	if err != nil {
		return nil, fmt.Errorf("find claude CLI %q: %w", spec.Bin, err)
	}
	args := spec.Args
	if l.Wrap != nil {
		if bin, args, err = l.Wrap(bin, args, spec); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
	// Own process group: shutdown signals reach the CLI's tools too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return &localHandle{cmd: cmd}, nil
}

type localHandle struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	reaped bool // the pid (our group's id) may be reused once reaped
}

func (h *localHandle) Name() string { return "pid " + strconv.Itoa(h.cmd.Process.Pid) }

// Pid is the CLI's process id (and its group's).
func (h *localHandle) Pid() int { return h.cmd.Process.Pid }

func (h *localHandle) Wait() (ExitStatus, error) {
	err := h.cmd.Wait()
	// Whatever is left in the group (a tool the CLI started) goes too,
	// before the group id is given up.
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	h.mu.Lock()
	h.reaped = true
	h.mu.Unlock()
	st := ExitStatus{Code: h.cmd.ProcessState.ExitCode()}
	if ws, ok := h.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.Signal = ws.Signal()
	}
	if _, ok := err.(*exec.ExitError); ok {
		err = nil
	}
	return st, err
}

func (h *localHandle) Signal(sig syscall.Signal) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reaped {
		return nil
	}
	return syscall.Kill(-h.cmd.Process.Pid, sig)
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
