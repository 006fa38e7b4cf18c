package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testkit"
)

// TestSecondInterruptForcesExit: Ctrl-C starts the graceful shutdown; a
// second within the window forces the exit while a session's shutdown
// hangs: its claude is frozen (SIGSTOP) in a turn whose tool ignores
// SIGTERM, so the graceful steps (interrupt, end of input, SIGTERM) wait
// out their graces. The bot exits at once with exitForced, says so in its
// log, and leaves nothing running: no claude, no tool, no keeper (/proc
// is the oracle).
func TestSecondInterruptForcesExit(t *testing.T) {
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) > 0 {
			return fakeanthropic.TextReply("the tool is done")
		}
		// The tool ignores SIGTERM, SIGINT and SIGHUP, and so its sleep.
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "trap '' TERM INT HUP; sleep 300"})}}
	})
	env, _ := consoleEnv(t, api)
	home := homeOf(env)
	b := startBotProc(t, env)
	b.say("hang")
	id := b.expect(`^\[main\] \? approval (\w+): Bash`)[1]
	b.say("allow " + id)
	testkit.WaitForf(t, testkit.Long, func() bool { return sleeper(home) > 0 }, func() string {
		return "the tool did not start"
	})
	before := claudes(home)
	for _, pid := range before {
		if pid != sleeper(home) && pid != b.cmd.Process.Pid {
			_ = syscall.Kill(pid, syscall.SIGSTOP)
		}
	}
	if err := b.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	b.waitLog(`msg="shutdown: stopping sessions"`)
	start := time.Now()
	if err := b.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the bot did not exit within 15 s of the second Ctrl-C; log:\n%s", strings.Join(b.logLines(), "\n"))
	}
	err := b.cmd.Wait()
	took := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitForced {
		t.Errorf("exit after the second Ctrl-C: %v, want code %d", err, exitForced)
	}
	t.Logf("exited %s after the second Ctrl-C", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("the forced exit took %s", took)
	}
	// Nothing left, at once: the bot ended its sessions before it exited.
	if left := claudes(home); len(left) > 0 {
		t.Errorf("session processes left after the forced exit: %v", left)
	}
	if k := keepersOf(before); len(k) > 0 {
		t.Errorf("keepers left after the forced exit: %v", k)
	}
	logs := strings.Join(b.logLines(), "\n")
	for _, want := range []string{"shutting down; press Ctrl-C again within 5s to force the exit", "forced exit: a second interrupt within 5s", "forced exit: sessions killed\" killed=1"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log (stderr) does not say %q:\n%s", want, logs)
		}
	}
}

// homeOf is the HOME of env: every session process of the bot carries it
// (or one under it).
func homeOf(env []string) string {
	for _, kv := range slices.Backward(env) {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			return h
		}
	}
	return ""
}

// claudes are the processes whose HOME is home: the bot's sessions, and
// the bot itself while it runs.
func claudes(home string) []int { return processesWithEnv("HOME=" + home) }

// sleeper is the pid of the session's tool, the sleep (0: none).
func sleeper(home string) int {
	for _, pid := range claudes(home) {
		if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); bytes.HasPrefix(b, []byte("sleep\x00300")) {
			return pid
		}
	}
	return 0
}

// keepersOf are the running keepers (claudeproc/keeper.go, named
// claudeops-keeper, the CLI's pid its first argument) of the processes
// pids.
func keepersOf(pids []int) []int {
	return processesWhose("cmdline", func(args []string) bool {
		i := slices.Index(args, "claudeops-keeper")
		if i < 0 || i+1 >= len(args) {
			return false
		}
		cli, err := strconv.Atoi(args[i+1])
		return err == nil && slices.Contains(pids, cli)
	})
}

// TestSecondInterruptAtTerminal: at a terminal, whose log goes to a file,
// both Ctrl-Cs are said on the terminal too, and in the log file; the
// session's claude is gone when the bot has exited.
func TestSecondInterruptAtTerminal(t *testing.T) {
	api := fakeanthropic.Start(t, echoScript)
	env, state := consoleEnv(t, api)
	home := homeOf(env)
	o := oneTerminal(t)
	p := startConsoleTyped(t, env, nil, o.stdout, o.stderr)
	o.stdout.Close()
	o.stderr.Close()
	p.say(t, "hello")
	waitOutput(t, o.conv, "claude: ok: hello")
	for _, want := range []string{"claudeops: interrupt: shutting down; press Ctrl-C again within 5s", "claudeops: forced exit: a second interrupt within 5s"} {
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		waitOutput(t, o.conv, want)
	}
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitForced {
			t.Errorf("exit: %v, want code %d", err, exitForced)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the bot did not exit after the second Ctrl-C")
	}
	if left := claudes(home); len(left) > 0 {
		t.Errorf("session processes left after the forced exit: %v", left)
	}
	log, err := os.ReadFile(filepath.Join(state, "claudeops.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`level=WARN msg="interrupt: shutting down; press Ctrl-C again`, `level=ERROR msg="forced exit: a second interrupt within 5s`, `msg="forced exit: sessions killed" killed=1`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log file lacks %q:\n%s", want, log)
		}
	}
}
