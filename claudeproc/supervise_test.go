package claudeproc

// Supervision: nothing a runner started for a session outlives the bot.
// The bot here is the test binary re-executed (CLAUDEOPS_FAKE_BOT=<mode>):
// it starts a stand-in CLI through a runner, the stand-in starts a "tool",
// and the test kills the bot with SIGKILL. /proc is the oracle: the
// processes carrying the run's marker in their environment, and the pids
// the bot reported.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
)

// fakeBotEnv selects the fake bot and its mode.
const fakeBotEnv = "CLAUDEOPS_FAKE_BOT"

// Modes of the fake bot: how it starts the stand-in CLI.
const (
	// botLocal: the Local runner, as the bot does.
	botLocal = "local"
	// botNoKeeper: Local without the keeper. A control: the tool outlives
	// the bot, so the keeper is what ends it.
	botNoKeeper = "no-keeper"
	// botRawThread: exec.Cmd with a parent-death signal, forked on a
	// goroutine's locked thread that then ends. A control of Go's caveat:
	// the CLI dies while the bot lives.
	botRawThread = "raw-thread"
	// botSandbox: the Sandbox runner (bwrap).
	botSandbox = "sandbox"
)

// The fake bot's settings, in its environment.
const (
	botSetMarkEnv  = "FAKEBOT_SET_MARK" // the mark for the CLI's environment (the bot itself has none)
	botMarkEnv     = "FAKEBOT_MARK"     // in the CLI's environment: "FAKEBOT_MARK=<mark>"
	botBwrapEnv    = "FAKEBOT_BWRAP"    // the sandbox's bwrap
	botHomeBaseEnv = "FAKEBOT_HOMEBASE" // the sandbox's HomeBase
)

// botCLIScript is the stand-in CLI: it starts two tools and says their
// pids, one in its process group, one in a session of its own (as the real
// CLI starts its Bash commands), then stays (as sleep, so that it needs no
// shell).
const botCLIScript = `sleep 300 & echo "tool $!"; setsid sleep 304 & echo "tool $!"; echo cli-ready; exec sleep 301`

// runFakeBot starts the stand-in CLI as mode says, prints "leader <pid>",
// "keeper <pid>" (0 if none), the CLI's "tool <pid>" lines and "ready",
// then waits to be killed.
func runFakeBot(mode string) int {
	// The main thread is never ended (Go parks it instead): keep the
	// starting goroutine below off it, so that its thread does end.
	runtime.LockOSThread()
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	in, err1 := os.Open(os.DevNull)
	errOut, err2 := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	spec := Spec{
		Bin: "/bin/sh", Args: []string{"-c", botCLIScript}, Dir: os.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), botMarkEnv + "=" + os.Getenv(botSetMarkEnv)},
		Session: Session{Channel: "test/supervise", Thread: "test/supervise/1"},
		Stdin:   in, Stdout: w, Stderr: errOut,
	}
	type started struct {
		leader, keeper int
		err            error
	}
	done := make(chan started)
	go func() {
		// Never unlocked: Go ends this thread when the goroutine returns,
		// as it does any thread whose goroutine returned locked.
		runtime.LockOSThread()
		done <- startForBot(mode, spec)
	}()
	s := <-done
	if s.err != nil {
		fmt.Fprintln(os.Stderr, "fake bot:", s.err)
		return 1
	}
	fmt.Printf("leader %d\nkeeper %d\n", s.leader, s.keeper)
	// A CLI killed early never says it is ready, and its tools hold the
	// pipe open: do not wait for it.
	sc := bufio.NewScanner(r)
	for mode != botRawThread && sc.Scan() && sc.Text() != "cli-ready" {
		fmt.Println(sc.Text())
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
	return 0
}

// startForBot starts the stand-in CLI as mode says.
func startForBot(mode string, spec Spec) (s struct {
	leader, keeper int
	err            error
}) {
	var h Handle
	ctx := context.Background()
	switch mode {
	case botRawThread:
		cmd := exec.Command(spec.Bin, spec.Args...)
		cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Env, spec.Dir, spec.Stdin, spec.Stdout, spec.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		s.err = cmd.Start()
		closeFiles(spec.Stdin, spec.Stdout, spec.Stderr)
		if s.err == nil {
			s.leader = cmd.Process.Pid
		}
		return s
	case botLocal:
		h, s.err = Local{}.Start(ctx, spec)
	case botNoKeeper:
		h, s.err = Local{noKeeper: true}.Start(ctx, spec)
	case botSandbox:
		h, s.err = Sandbox{Bwrap: os.Getenv(botBwrapEnv), HomeBase: os.Getenv(botHomeBaseEnv)}.Start(ctx, spec)
	default:
		s.err = fmt.Errorf("unknown mode %q", mode)
	}
	if s.err != nil {
		return s
	}
	g, ok := h.(Grouped).Group()
	if !ok {
		s.err = fmt.Errorf("%s: not identified", h.Name())
		return s
	}
	s.leader, s.keeper = g.Leader.PID, g.Keeper.PID
	return s
}

// fakeBot is a running fake bot and what it said.
type fakeBot struct {
	cmd            *exec.Cmd
	mark           string
	leader, keeper int
	tools          []int
}

func startFakeBot(t *testing.T, mode string, extraEnv ...string) *fakeBot {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	fb := &fakeBot{mark: hex.EncodeToString(b[:])}
	fb.cmd = exec.Command(os.Args[0], "-test.run=^$")
	fb.cmd.Env = append(os.Environ(), fakeBotEnv+"="+mode, botSetMarkEnv+"="+fb.mark)
	fb.cmd.Env = append(fb.cmd.Env, extraEnv...)
	fb.cmd.Stderr = os.Stderr
	out, err := fb.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fb.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fb.cmd.Process.Kill()
		_ = fb.cmd.Wait()
		// Whatever a failing case left, the test's own marked processes.
		for _, pid := range markedProcesses(fb.mark) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 1 && f[0] == "ready" {
			break
		}
		if len(f) != 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "leader":
			fb.leader = n
		case "keeper":
			fb.keeper = n
		case "tool":
			fb.tools = append(fb.tools, n)
		}
	}
	if fb.leader == 0 {
		t.Fatalf("the fake bot (%s) did not report its CLI", mode)
	}
	return fb
}

// kill kills the fake bot with SIGKILL and reaps it.
func (fb *fakeBot) kill(t *testing.T) {
	t.Helper()
	if err := fb.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = fb.cmd.Wait()
}

// markedProcesses are the live processes whose environment holds the mark.
func markedProcesses(mark string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || processGone(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), botMarkEnv+"="+mark) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitNoneMarked waits until no process carries the mark.
func waitNoneMarked(t *testing.T, mark string, timeout time.Duration) {
	t.Helper()
	testkit.WaitForf(t, timeout, func() bool { return len(markedProcesses(mark)) == 0 }, func() string {
		return fmt.Sprintf("processes of the session outlived the bot: %v", describePids(markedProcesses(mark)))
	})
}

func describePids(pids []int) []string {
	var out []string
	for _, pid := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %q", pid, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")))
	}
	return out
}

// afterThreadExit is how long the tests give a parent-death signal tied to
// the wrong thread to fire: it comes as the thread ends, before "ready".
const afterThreadExit = 500 * time.Millisecond

// stopped reports whether pid is stopped (state T), from /proc.
func stopped(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.State == 'T'
}

func TestSessionDiesWithBot(t *testing.T) {
	const gone = 30 * time.Second // generous: a loaded machine
	t.Run("local: the CLI, its tools and the keeper", func(t *testing.T) {
		fb := startFakeBot(t, botLocal)
		time.Sleep(afterThreadExit)
		alive := append([]int{fb.leader, fb.keeper}, fb.tools...)
		if fb.keeper == 0 || len(fb.tools) != 2 || slices.ContainsFunc(alive, processGone) {
			t.Fatalf("before the bot died: leader %d, keeper %d, tools %v: %v", fb.leader, fb.keeper, fb.tools, describePids(alive))
		}
		if got := markedProcesses(fb.mark); len(got) != 3 {
			t.Fatalf("marked processes %v, want the CLI and its tools", describePids(got))
		}
		fb.kill(t)
		waitNoneMarked(t, fb.mark, gone)
		waitGone(t, fb.keeper, gone)
	})

	t.Run("control: without the keeper the CLI stays stopped and its tools run", func(t *testing.T) {
		fb := startFakeBot(t, botNoKeeper)
		time.Sleep(afterThreadExit)
		if processGone(fb.leader) || len(fb.tools) != 2 || fb.keeper != 0 {
			t.Fatalf("leader %d gone %v, tools %v, keeper %d", fb.leader, processGone(fb.leader), fb.tools, fb.keeper)
		}
		fb.kill(t)
		testkit.WaitForf(t, gone, func() bool { return stopped(fb.leader) }, func() string { // the parent-death signal
			return fmt.Sprintf("the CLI was not stopped when its bot died: %v", describePids([]int{fb.leader}))
		})
		time.Sleep(afterThreadExit)
		if slices.ContainsFunc(fb.tools, processGone) {
			t.Fatal("a tool died with the bot without a keeper: the keeper case proves nothing")
		}
	})

	t.Run("control: a parent-death signal forked on a thread that ends", func(t *testing.T) {
		fb := startFakeBot(t, botRawThread)
		// The bot lives on, but the thread it forked from has ended.
		waitGone(t, fb.leader, gone)
		if err := fb.cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("the fake bot died: %v", err)
		}
	})

	t.Run("sandbox", func(t *testing.T) {
		bwrap := testcli.Bwrap(t)
		fb := startFakeBot(t, botSandbox, botBwrapEnv+"="+bwrap, botHomeBaseEnv+"="+t.TempDir())
		time.Sleep(afterThreadExit)
		if processGone(fb.leader) || fb.keeper != 0 {
			t.Fatalf("bwrap %d gone %v, keeper %d", fb.leader, processGone(fb.leader), fb.keeper)
		}
		// The CLI and its tools inside, as the host sees them.
		if got := markedProcesses(fb.mark); len(got) < 3 {
			t.Fatalf("marked processes %v, want the CLI and its tools", describePids(got))
		}
		fb.kill(t)
		waitNoneMarked(t, fb.mark, gone)
	})
}

// TestSignalReachesDetachedTools: a local session's signals reach every
// process under the CLI, those in sessions of their own included, and
// nothing of it is left once Wait returns.
func TestSignalReachesDetachedTools(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(signalName(sig), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			in, _ := os.Open(os.DevNull)
			errOut, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			h, err := Local{}.Start(context.Background(), Spec{Bin: "/bin/sh", Args: []string{"-c", botCLIScript},
				Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}, Stdin: in, Stdout: w, Stderr: errOut})
			if err != nil {
				t.Fatal(err)
			}
			var tools []int
			sc := bufio.NewScanner(r)
			for sc.Scan() && sc.Text() != "cli-ready" {
				if n, _ := strconv.Atoi(strings.TrimPrefix(sc.Text(), "tool ")); n > 0 {
					tools = append(tools, n)
					killSleepAtEnd(t, n)
				}
			}
			if len(tools) != 2 {
				t.Fatalf("tools %v", tools)
			}
			if err := h.Signal(sig); err != nil {
				t.Fatal(err)
			}
			st, err := h.Wait()
			if err != nil || st.Signal != sig {
				t.Errorf("Wait = %+v, %v; want ended by %s", st, err, signalName(sig))
			}
			for _, pid := range tools {
				waitGone(t, pid, 30*time.Second)
			}
		})
	}
}

// TestKeeperEndsWithSession: a session's keeper runs beside the CLI, in a
// process group of its own (the session's signals do not reach it), and is gone and
// reaped (no /proc entry, not even a zombie) once the session has ended.
func TestKeeperEndsWithSession(t *testing.T) {
	for _, mode := range []string{fakeBasic, fakeIgnoreTerm} {
		t.Run(mode, func(t *testing.T) {
			p := startFake(t, mode, Options{})
			g, ok := p.handle.(Grouped).Group()
			if !ok || g.Keeper.PID == 0 || g.ID != p.Pid() || g.Leader.PID != p.Pid() {
				t.Fatalf("Group() = %+v, %v; want the CLI's group with a keeper", g, ok)
			}
			st, err := readStat(g.Keeper.PID)
			if err != nil || st.PGID != g.Keeper.PID || st.PPID != os.Getpid() {
				t.Fatalf("keeper's stat %+v, %v; want a group of its own, a child of ours", st, err)
			}
			if err := p.SendText("hello"); err != nil {
				t.Fatal(err)
			}
			waitEvent[*Result](t, p, evTimeout, nil)
			info, _ := closeWithin(t, p)
			t.Logf("closed: %s", brief(info))
			for _, pid := range []int{g.Keeper.PID, g.Leader.PID} {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("pid %d still in /proc after Close: %v", pid, err)
				}
			}
		})
	}
}
