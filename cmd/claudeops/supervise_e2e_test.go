package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// proc is what /proc says of a process.
type proc struct {
	pid, ppid, pgid int
	cmdline         string // arguments joined by spaces
}

// readProc reads /proc/<pid>; ok is false when it is gone or a zombie.
func readProc(pid int) (p proc, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return proc{}, false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || f[0] == "Z" {
		return proc{}, false
	}
	p.pid = pid
	p.ppid, _ = strconv.Atoi(f[1])
	p.pgid, _ = strconv.Atoi(f[2])
	cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	p.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))
	return p, true
}

// allProcs lists the live processes.
func allProcs() []proc {
	ents, _ := os.ReadDir("/proc")
	var ps []proc
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := readProc(pid); ok {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// childrenOf lists the live children of pid that are not keepers: the
// session processes a bot started (claude, or bwrap in the sandbox).
func childrenOf(pid int) (sessions, keepers []proc) {
	for _, p := range allProcs() {
		if p.ppid != pid {
			continue
		}
		if strings.Contains(p.cmdline, "claudeops-keeper") {
			keepers = append(keepers, p)
		} else {
			sessions = append(sessions, p)
		}
	}
	return sessions, keepers
}

func procList(pids []int) string {
	var out []string
	for _, pid := range pids {
		if p, ok := readProc(pid); ok {
			out = append(out, fmt.Sprintf("%d (parent %d, group %d): %.120s", p.pid, p.ppid, p.pgid, p.cmdline))
		}
	}
	return strings.Join(out, "\n")
}

// TestKill9MidToolThenRestart: the bot is killed with SIGKILL while an
// auto-approved `nice sleep 120` runs in a turn (the CLI refuses a
// standalone sleep) and a follow-up waits behind it. Nothing of that
// session outlives it (/proc: claude, its sleep, the keeper), long before
// the sleep would have ended. The restarted bot tells the thread, once,
// that it restarted during the turn, and that the follow-up was not taken
// up; the turn is recorded interrupted and
// counted by status and cost; the next message resumes the conversation
// with one claude process, the one the store records.
func TestKill9MidToolThenRestart(t *testing.T) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		text := req.LastUserText()
		switch {
		case len(req.ToolResults()) > 0:
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("slept")}}
		case strings.HasSuffix(text, "run nice sleep 120"):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "nice sleep 120"})}}
		case strings.HasSuffix(text, "recall") && strings.Contains(req.Transcript(), "pineapple"):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I remember pineapple")}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted")}}
	})
	home, work := t.TempDir(), t.TempDir()
	db := filepath.Join(t.TempDir(), "claudeops.db")
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_DB="+db, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"CLAUDEOPS_LOG_LEVEL=debug",
	)
	env = append(env, testrunner.Env(t, home)...)
	t.Cleanup(func() { // whatever a failure left
		for _, pid := range processesWithEnv("HOME=" + home) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	b := startBotProc(t, env)
	b.say("rules add allow Bash(nice sleep 120)")
	b.expect(`^\[main\] \* Rule \d+: allow Bash\(nice sleep 120\) in this channel\.$`)
	b.say("note pineapple")
	b.expect(`^\[main\] claude: noted$`)
	b.expect(`^\[main\] — ✓`)
	b.say("run nice sleep 120")
	// A follow-up waits behind the turn: taken in, acked, not yet taken up.
	b.say("then tell me a joke")
	b.expect(`^\[main\] \* Queued: “then tell me a joke”`)
	session := killMidTool(t, b, home)

	b2 := startBotProc(t, env)
	b2.expect(`^\[main\] \* The bot restarted during Claude's turn on “run nice sleep 120”, started \d{4}-\d\d-\d\d \d\d:\d\d UTC, ` +
		`before that turn's end was recorded, so the bot cannot tell whether it finished: if Claude's answer above ends with its footer, it did; ` +
		`if not, what it had not finished is lost\. Your next message resumes the conversation\.$`)
	b2.expect(`^\[main\] \* The bot restarted before Claude took up “then tell me a joke”, sent \d{4}-\d\d-\d\d \d\d:\d\d UTC: ` +
		`it was not run\. Send it again if it still matters\.$`)
	b2.say("status")
	b2.expect(`^\[main\] \* Cost so far: \$0\.\d+ over 2 turns \(1 whose end a restart of the bot left unrecorded, cost unknown\)$`)
	b2.say("cost")
	b2.expect(`^\[main\] \* This thread: \$0\.\d+ · 2 turns \(1 whose end a restart of the bot left unrecorded, cost unknown\) · \d+ input / \d+ output tokens$`)
	b2.expect(`^\[main\] \* This channel today \(UTC\): \$0\.\d+ · 2 turns \(1 whose end a restart of the bot left unrecorded, cost unknown\)$`)
	b2.say("recall")
	b2.expect(`^\[main\] claude: I remember pineapple$`)
	oneProcess(t, b2, db, session)

	// A clean exit forgets the process; the turn stays interrupted.
	if err := b2.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.SessionProcesses(context.Background())
	owed, err2 := st.TurnsOwingNotice(context.Background())
	unsettled, err3 := st.UnsettledMessages(context.Background())
	st.Close()
	if err != nil || err2 != nil || err3 != nil || len(recs) != 0 || len(owed) != 0 || len(unsettled) != 0 {
		t.Errorf("after a clean exit: process records %+v, turns owing a notice %+v, messages not settled %+v (%v, %v, %v)",
			recs, owed, unsettled, err, err2, err3)
	}

	// A second restart does not tell the thread again.
	b3 := startBotProc(t, env)
	b3.say("status")
	b3.expect(`^\[main\] \* Cost so far: \$0\.\d+ over 3 turns \(1 whose end a restart of the bot left unrecorded, cost unknown\)$`)
	_ = b3.endInput(90 * time.Second)
	b3.mu.Lock()
	defer b3.mu.Unlock()
	for _, l := range b3.lines {
		if strings.Contains(l, "restarted during") || strings.Contains(l, "restarted before") {
			t.Errorf("the second restart told the thread again: %q", l)
		}
	}
}

// killMidTool waits until the turn's `sleep 120` runs, kills the bot with
// SIGKILL and checks that every process of its session ends; it returns
// the session's process (claude, or bwrap) as it was.
func killMidTool(t *testing.T, b *botProc, home string) proc {
	t.Helper()
	botPid := b.cmd.Process.Pid
	var sleepPid int
	testkit.WaitForf(t, 60*time.Second, func() bool {
		for _, pid := range processesWithEnv("HOME=" + home) {
			if p, ok := readProc(pid); ok && p.cmdline == "sleep 120" {
				sleepPid = pid
				return true
			}
		}
		return false
	}, func() string {
		b.mu.Lock()
		defer b.mu.Unlock()
		return "the turn's sleep 120 did not start; the console shows:\n" + strings.Join(b.lines, "\n")
	})
	sessions, keepers := childrenOf(botPid)
	if len(sessions) != 1 {
		t.Fatalf("session processes of the bot: %+v", sessions)
	}
	session := sessions[0]
	if testcli.Runner(t) == "local" && len(keepers) != 1 {
		t.Fatalf("keepers %+v of the session %+v", keepers, session)
	}
	// The tool runs under the session's process (the CLI starts it in a
	// session of its own: no group signal reaches it).
	for p, ok := readProc(sleepPid); p.pid != session.pid; p, ok = readProc(p.ppid) {
		if !ok || p.ppid <= 1 {
			t.Fatalf("the tool %d does not run under the session's process %d:\n%s", sleepPid, session.pid, procList([]int{sleepPid}))
		}
	}
	watch := append(processesWithEnv("HOME="+home), session.pid)
	for _, k := range keepers {
		watch = append(watch, k.pid)
	}
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.done
	_ = b.cmd.Wait()
	// Well within the 120 s the sleep would take on its own.
	testkit.WaitForf(t, 45*time.Second, func() bool {
		return !slices.ContainsFunc(watch, func(pid int) bool { _, ok := readProc(pid); return ok }) &&
			len(processesWithEnv("HOME="+home)) == 0
	}, func() string {
		return "processes of the killed bot's session still run:\n" + procList(append(watch, processesWithEnv("HOME="+home)...))
	})
	return session
}

// oneProcess checks that the resumed session runs as one process: one
// child of the bot (not the killed run's), the one the store records.
func oneProcess(t *testing.T, b *botProc, db string, old proc) {
	t.Helper()
	sessions, _ := childrenOf(b.cmd.Process.Pid)
	if len(sessions) != 1 || sessions[0].pid == old.pid {
		t.Fatalf("session processes of the restarted bot: %+v (the killed run's was %d)", sessions, old.pid)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.SessionProcesses(context.Background())
	if err != nil || len(recs) != 1 || recs[0].PID != sessions[0].pid || recs[0].ThreadKey != "console/console/main" {
		t.Errorf("recorded processes %+v, %v; want the one live session %d", recs, err, sessions[0].pid)
	}
}
