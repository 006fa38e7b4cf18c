package claudeproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/claudeops/claudeops/internal/proc"
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
	// Mounts are more directories the session sees (NestMounts): a
	// runner that cannot show one as asked refuses the start.
	Mounts []Mount
	// Image, when set, is the image to run the CLI from in place of the
	// runner's own (a channel's, package settings): a runner with images
	// (docker, kubernetes) uses it, checked as its own is (present, its
	// CLI recent enough), or refuses the start; one without (Local,
	// Sandbox) has none to replace and ignores it.
	Image string
	// Progress, when set, is told what Start waits on (capacity in a
	// cluster), as a sentence for people; called on Start's goroutine.
	Progress func(text string)
	// Stdin is the CLI's end of its input pipe; Stdout and Stderr the
	// write ends of its output pipes.
	Stdin, Stdout, Stderr *os.File
	// MCPConfig, when set, is the read end of a pipe holding the
	// operator's MCP servers: a ConfigPasser gives it to the CLI as its
	// descriptor 3 (MCPConfigPath) and owns it as it owns the three
	// above; other runners are never given one.
	MCPConfig *os.File
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
	// Reason, when set, is the runner's own account of the end ("its Pod
	// was evicted: …"), said in place of the exit code's.
	Reason string
}

// Local runs the CLI as a child process of the bot, as the bot's user, in
// a session and process group of its own. Wrap, when set, rewrites the
// command line (a sandbox runner puts `bwrap … --` in front).
//
// With a HomeBase, each thread's CLI keeps its state in a config
// directory of its own (HomeBase/<sha256 of Session.HomeKey>, made 0700,
// given as CLAUDE_CONFIG_DIR): one thread's commands that write the CLI's
// default home (~/.claude) reach no other thread's shell snapshot or
// transcripts. HOME stays the bot user's, so that git and ssh keep the
// operator's identity. It is no wall: a command runs as the bot's user
// and can name another thread's home; the bot's rules never allow that.
//
// Nothing of a session outlives the bot. The CLI's parent-death signal
// (internal/proc) is SIGSTOP, not SIGKILL: a killed CLI's tools would be
// reparented to init at once, out of reach (the real CLI starts each Bash
// command in a session of its own, which no group signal reaches), while a
// stopped one does nothing more and keeps them as its children. The
// session's keeper (internal/proc) then kills the whole tree. Should the keeper
// be gone too, what the group was is on the handle (Grouped), for the bot
// to record and end at its next start.
type Local struct {
	Wrap func(bin string, args []string, spec Spec) (string, []string, error)
	// HomeBase holds a CLI config directory per thread; "" leaves the
	// CLI's own (the bot user's ~/.claude, shared by every session).
	HomeBase string
	// noKeeper: the session needs no keeper (bwrap's PID namespace ends
	// with bwrap).
	noKeeper bool
}

// Start implements Runner.
func (l Local) Start(_ context.Context, spec Spec) (Handle, error) {
	defer closeFiles(spec.Stdin, spec.Stdout, spec.Stderr, spec.MCPConfig) // the child has its copies
	bin, err := exec.LookPath(spec.Bin)
	if err != nil {
		return nil, fmt.Errorf("find claude CLI %q: %w", spec.Bin, err)
	}
	if l.HomeBase != "" {
		home := HomeIn(l.HomeBase, spec.Session)
		if err := makeHome(l.HomeBase, home); err != nil {
			return nil, err
		}
		spec.Env = setEnv(spec.Env, "CLAUDE_CONFIG_DIR", home)
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
	if spec.MCPConfig != nil {
		cmd.ExtraFiles = []*os.File{spec.MCPConfig} // descriptor 3: MCPConfigPath
	}
	// Its own session: no controlling terminal to push input into, and a
	// process group of its own, so that signals reach the tools it keeps
	// in it. A session of its own also keeps the kernel from continuing
	// it (SIGHUP, SIGCONT to a newly orphaned group) once stopped by the
	// parent-death signal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGSTOP}
	h := &localHandle{cmd: cmd}
	proc.OnSpawnThread(func() { err = h.start(bin, !l.noKeeper) })
	if err != nil {
		return nil, err
	}
	return h, nil
}

type localHandle struct {
	cmd    *exec.Cmd
	keeper *proc.Keeper // nil when the runner needs none
	group  Group
	known  bool // group was identified

	mu     sync.Mutex
	reaped bool // the pid (our group's id) may be reused once reaped
}

// start starts the CLI, identifies it (it is ours and not reaped, so its
// /proc entry is there even if it has exited already) and its keeper.
func (h *localHandle) start(bin string, withKeeper bool) error {
	if err := h.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	pid := h.cmd.Process.Pid
	leader, err := Identify(pid)
	h.group, h.known = Group{ID: pid, Leader: leader}, err == nil
	if !withKeeper {
		return nil
	}
	if err == nil {
		h.keeper, err = proc.StartKeeper(leader.PID, leader.Start)
	}
	if err != nil {
		// A session the bot could not hold is not started.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = h.cmd.Wait()
		return err
	}
	if h.group.Keeper, err = Identify(h.keeper.PID()); err != nil {
		h.known = false
	}
	return nil
}

// Group implements Grouped.
func (h *localHandle) Group() (Group, bool) { return h.group, h.known }

func (h *localHandle) Name() string { return "pid " + strconv.Itoa(h.cmd.Process.Pid) }

// Pid is the CLI's process id (and its group's).
func (h *localHandle) Pid() int { return h.cmd.Process.Pid }

func (h *localHandle) Wait() (ExitStatus, error) {
	pid := h.cmd.Process.Pid
	// Wait for the exit without reaping: until the CLI is reaped its pid,
	// and so the group's id, cannot name anyone else's, so the group kill
	// below reaches only what is left of the session.
	werr := waitExited(pid)
	h.mu.Lock()
	// Whatever is left in the group (a tool the CLI started) goes too,
	// before the group id is given up; the keeper has nothing to do.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if h.keeper != nil {
		h.keeper.Kill()
	}
	err := h.cmd.Wait()
	h.reaped = true
	h.mu.Unlock()
	if h.keeper != nil {
		if kerr := h.keeper.Wait(); kerr != nil && err == nil {
			err = fmt.Errorf("reap the session's keeper: %w", kerr)
		}
	}
	st := ExitStatus{Code: h.cmd.ProcessState.ExitCode()}
	if ws, ok := h.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.Signal = ws.Signal()
	}
	if _, ok := err.(*exec.ExitError); ok {
		err = nil
	}
	if err == nil && werr != nil {
		err = werr
	}
	return st, err
}

// Signal sends sig to the CLI, its process group and every process under
// it (signalSession).
func (h *localHandle) Signal(sig syscall.Signal) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reaped {
		return nil
	}
	return signalSession(h.cmd.Process.Pid, sig)
}

// waitExited blocks until the child pid has exited, leaving it to be
// reaped (waitid with WNOWAIT).
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			if err != nil {
				return fmt.Errorf("wait for pid %d: %w", pid, err)
			}
			return nil
		}
	}
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
