package bot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// leftover is a real process group standing in for a session a dead bot
// left running: a leader and a tool it started.
type leftover struct {
	cmd  *exec.Cmd
	tool int
	rec  store.SessionProcess
}

// startLeftover starts the group and the record a bot would have made of
// it; forge, when set, changes the record.
func startLeftover(t *testing.T, thread string, forge func(*store.SessionProcess)) *leftover {
	t.Helper()
	// A CLI's session: its own, and a tool in a session of its own too,
	// as the real CLI starts its Bash commands.
	cmd := exec.Command("/bin/sh", "-c", `setsid sleep 300 & echo "tool $!"; exec sleep 301`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	tool, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "tool "))
	if tool == 0 {
		t.Fatalf("no tool pid: %q", line)
	}
	id, err := claudeproc.Identify(pid)
	if err != nil {
		t.Fatal(err)
	}
	rec := store.SessionProcess{ThreadKey: thread, Name: "pid " + strconv.Itoa(pid), PGID: pid, PID: pid,
		StartTicks: id.Start, BootID: id.Boot, StartedAt: time.Now()}
	if forge != nil {
		forge(&rec)
	}
	return &leftover{cmd: cmd, tool: tool, rec: rec}
}

// running reports whether pid runs, from /proc: it exists and is no
// zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// TestRecoverEndsLeftoverProcesses: at start, a recorded process group
// whose leader is still the recorded process is ended, whole; one whose
// pid now names a process with another start time (pid reuse) is not
// touched. Both records are forgotten.
func TestRecoverEndsLeftoverProcesses(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ours := startLeftover(t, "console/console/ours", nil)
	reused := startLeftover(t, "console/console/reused", func(r *store.SessionProcess) { r.StartTicks-- })
	for _, l := range []*leftover{ours, reused} {
		if _, err := st.RecordProcess(ctx, l.rec); err != nil {
			t.Fatal(err)
		}
	}
	b := New(Config{StopGrace: 2 * time.Second}, st)
	if err := b.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		l    *leftover
		want bool
	}{
		{"matching identity: ended", ours, false},
		{"start time differs: untouched", reused, true},
	} {
		for _, pid := range []int{tc.l.cmd.Process.Pid, tc.l.tool} {
			if got := running(pid); got != tc.want {
				t.Errorf("%s: pid %d running = %v, want %v", tc.name, pid, got, tc.want)
			}
		}
	}
	if recs, err := st.SessionProcesses(ctx); err != nil || len(recs) != 0 {
		t.Errorf("records after Recover: %+v, %v", recs, err)
	}
}

// TestRestartTellsInterruptedTurnOnce: what a bot that died mid-turn left
// (the turn without an end, its session's process group still running)
// is settled by the next start before the thread resumes: the group is
// ended, the turn is closed as interrupted and counted by status and
// cost, and the thread is told once; a second restart says nothing more.
func TestRestartTellsInterruptedTurnOnce(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	h.say("note pineapple")
	h.expect(`^\[main\] — ✓`)

	// A run that "died": its records, as it left them.
	h.stopBot()
	ctx := context.Background()
	st, err := store.Open(ctx, h.db)
	if err != nil {
		t.Fatal(err)
	}
	left := startLeftover(t, "console/console/main", nil)
	_, err1 := st.RecordProcess(ctx, left.rec)
	_, err2 := st.StartTurn(ctx, store.Turn{ThreadKey: "console/console/main", ChannelKey: "console/console",
		Prompt: "deploy the thing\nwith care", StartedAt: time.Date(2026, 2, 3, 4, 5, 0, 0, time.UTC)})
	// Threads whose notice cannot be posted now: a platform that does not
	// run, a key that names no thread.
	_, err3 := st.StartTurn(ctx, store.Turn{ThreadKey: "slack/T1/C1/1.5", ChannelKey: "slack/T1/C1", Prompt: "x", StartedAt: time.Now()})
	_, err4 := st.StartTurn(ctx, store.Turn{ThreadKey: "garbage", Prompt: "x", StartedAt: time.Now()})
	if err := errors.Join(err1, err2, err3, err4, st.Close()); err != nil {
		t.Fatal(err)
	}

	h.startBot()
	h.expect(`^\[main\] \* The bot restarted during Claude's turn on “deploy the thing …”, started 2026-02-03 04:05 UTC, before that turn's end was recorded, so the bot cannot tell whether it finished`)
	for _, pid := range []int{left.cmd.Process.Pid, left.tool} {
		if running(pid) {
			t.Errorf("pid %d of the dead run's session still runs after the restart", pid)
		}
	}
	h.say("status")
	h.expect(`Cost so far: \$0\.\d+ over 2 turns \(1 whose end a restart of the bot left unrecorded, cost unknown\)$`)
	h.say("cost")
	h.expect(`^\[main\] \* This thread: \$0\.\d+ · 2 turns \(1 whose end a restart of the bot left unrecorded, cost unknown\) · `)
	h.expect(`^\[main\] \* This channel today \(UTC\): \$0\.\d+ · 2 turns \(1 whose end a restart of the bot left unrecorded, cost unknown\)$`)
	h.say("recall")
	h.expect(`^\[main\] claude: I remember pineapple$`)
	h.expect(`^\[main\] — ✓`)
	owed, err := h.st.TurnsOwingNotice(ctx)
	if err != nil || len(owed) != 1 || owed[0].ThreadKey != "slack/T1/C1/1.5" {
		t.Errorf("turns still owing a notice: %+v, %v; want the Slack thread's only", owed, err)
	}

	from := len(h.out.Lines())
	h.restart()
	h.say("status")
	h.expect(`Cost so far: \$0\.\d+ over 3 turns \(1 whose end a restart of the bot left unrecorded, cost unknown\)$`)
	h.absent(from, `restarted during`)
}
