package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// TestMain lets the tests run the real main as a separate process (the
// test binary re-executed), so that it can be killed with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("CLAUDEOPS_TEST_RUN_MAIN") == "1" {
		os.Exit(start())
	}
	os.Exit(m.Run())
}

// botProc is `claudeops console` running as a child process.
type botProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	lines  []string
	logs   []string // stderr: the bot's log
	notify chan struct{}
	done   chan struct{}
	cursor int
}

func startBotProc(t *testing.T, env []string) *botProc {
	t.Helper()
	return startBotCmd(t, exec.Command(os.Args[0], "console"), env)
}

// startBotCmd runs cmd (the test binary as `claudeops console`, as some
// user, say) with env as a botProc.
func startBotCmd(t *testing.T, cmd *exec.Cmd, env []string) *botProc {
	t.Helper()
	cmd.Env = append(testrunner.Explicit(env), "CLAUDEOPS_TEST_RUN_MAIN=1")
	return startProc(t, cmd)
}

type testLog struct {
	t   *testing.T
	bot *botProc // if set, gets the lines
	mu  sync.Mutex
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.bot; b != nil {
		b.mu.Lock()
		b.logs = append(b.logs, strings.Split(strings.TrimRight(string(p), "\n"), "\n")...)
		b.mu.Unlock()
	}
	if testing.Verbose() {
		l.t.Logf("bot: %s", strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (b *botProc) say(s string) {
	b.t.Helper()
	if _, err := io.WriteString(b.stdin, s+"\n"); err != nil {
		b.t.Fatal(err)
	}
}

func (b *botProc) expect(pattern string) []string {
	b.t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.After(90 * time.Second)
	for {
		b.mu.Lock()
		all := append([]string(nil), b.lines...)
		b.mu.Unlock()
		for i := b.cursor; i < len(all); i++ {
			if m := re.FindStringSubmatch(all[i]); m != nil {
				b.cursor = i + 1
				return m
			}
		}
		select {
		case <-b.notify:
		case <-b.done:
			b.mu.Lock()
			n := len(b.lines)
			b.mu.Unlock()
			if n == len(all) {
				b.t.Fatalf("bot ended without a line matching %q; output:\n%s", pattern, strings.Join(all, "\n"))
			}
		case <-deadline:
			b.t.Fatalf("no line matching %q; output:\n%s", pattern, strings.Join(all, "\n"))
		}
	}
}

// waitLog waits until the bot has logged a line containing msg.
func (b *botProc) waitLog(msg string) {
	b.t.Helper()
	testkit.WaitForf(b.t, testkit.Long, func() bool {
		return slices.ContainsFunc(b.logLines(), func(l string) bool { return strings.Contains(l, msg) })
	}, func() string {
		return fmt.Sprintf("the bot did not log %q; log:\n%s", msg, strings.Join(b.logLines(), "\n"))
	})
}

// endInput closes the bot's input and waits, within d, for the bot to
// exit (fatal if it does not); it returns the process's exit error.
func (b *botProc) endInput(d time.Duration) error {
	b.t.Helper()
	b.stdin.Close()
	select {
	case <-b.done:
	case <-time.After(d):
		b.t.Fatal("the bot did not exit after its input ended")
	}
	return b.cmd.Wait()
}

func (b *botProc) logLines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.logs...)
}

// logOrder checks that the log has a line with each of msgs, in this order.
func logOrder(t *testing.T, log []string, msgs ...string) {
	t.Helper()
	i := 0
	for _, l := range log {
		if i < len(msgs) && strings.Contains(l, "msg=\""+msgs[i]+"\"") {
			i++
		}
	}
	if i < len(msgs) {
		t.Errorf("log lacks %q after %q; log:\n%s", msgs[i], msgs[:i], strings.Join(log, "\n"))
	}
}

// processesWithEnv finds processes whose environment holds kv: the claude
// processes of this test (their HOME is unique).
func processesWithEnv(kv string) []int {
	return processesWhose("environ", func(vars []string) bool {
		// A sandboxed claude's HOME is a channel's, under kv's.
		return slices.ContainsFunc(vars, func(v string) bool { return v == kv || strings.HasPrefix(v, kv+"/") })
	})
}

// processesWhose finds the processes whose /proc/<pid>/<file>, read as
// NUL-separated strings (environ, cmdline), is what match says.
func processesWhose(file string, match func([]string) bool) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), file))
		if err == nil && match(strings.Split(string(b), "\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestKill9MidTurnThenRestart: the bot is killed with SIGKILL while an
// approval is pending; after a restart the approval shows as expired and
// the thread resumes its conversation.
func TestKill9MidTurnThenRestart(t *testing.T) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("tool said: " + trs[0].Content)}}
		}
		text := req.LastUserText()
		switch {
		case strings.HasSuffix(text, "run touch never.txt"):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch never.txt"})}}
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

	b := startBotProc(t, env)
	b.say("note pineapple")
	b.expect(`^\[main\] claude: noted$`)
	b.say("run touch never.txt")
	id := b.expect(`^\[main\] \? approval (\w+): Bash`)[1]
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.done
	_ = b.cmd.Wait()

	// The bot could not stop its claude itself; the session's keeper ends
	// it and its tools once the bot is gone (internal/proc/keeper.go).
	if !testkit.Until(testkit.Long, func() bool { return len(processesWithEnv("HOME="+home)) == 0 }) {
		for _, pid := range processesWithEnv("HOME=" + home) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatal("the orphaned claude did not exit after its bot died")
	}

	b2 := startBotProc(t, env)
	// The prompt is updated, or, if the bot died before it recorded where
	// the prompt was, the thread is told.
	b2.expect(`^\[main\] (! approval ` + id + `: Expired: the bot restarted before anyone decided\.|\* The approval ` + id + ` for Bash expired: the bot restarted before anyone decided\.)$`)
	b2.say("recall")
	b2.expect(`^\[main\] claude: I remember pineapple$`)
	if testcli.Runner(t) != "sandbox" {
		// The local runner keeps the thread's CLI state in a home of its
		// own beside the database (there is no state directory here), not
		// in the bot user's ~/.claude: the resume read it there.
		if got, _ := filepath.Glob(filepath.Join(filepath.Dir(db), "claudeops.claude-homes", "*", "projects", "*", "*.jsonl")); len(got) == 0 {
			t.Error("no transcript in the thread's CLI home")
		}
		if _, err := os.Stat(filepath.Join(home, ".claude")); err == nil {
			t.Error("a session wrote the bot user's own ~/.claude")
		}
	}
	// End of input: the bot lets the turn finish, then exits cleanly.
	if err := b2.endInput(60 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "never.txt")); !os.IsNotExist(err) {
		t.Errorf("the unapproved command ran: %v", err)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, ok, err := st.GetApproval(context.Background(), id)
	if err != nil || !ok || a.State != "expired" {
		t.Errorf("approval in the store: %+v %v %v", a, ok, err)
	}
	if pids := processesWithEnv("HOME=" + home); len(pids) > 0 {
		t.Errorf("claude processes left after a clean exit: %v", pids)
	}
}

// TestSIGTERMShutsDownInOrder: a signal stops intake, then the scheduler,
// then the sessions (their pending approvals expire and say so), then the
// adapters, then the store, as the log shows in that order, and exits 0,
// leaving no claude process behind. A message typed once intake has
// stopped reaches neither the bot's store nor Claude.
func TestSIGTERMShutsDownInOrder(t *testing.T) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.Contains(req.Transcript(), "too late") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("taken after shutdown")}}
		}
		if len(req.ToolResults()) > 0 {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch later.txt"})}}
	})
	home, work := t.TempDir(), t.TempDir()
	db := filepath.Join(t.TempDir(), "claudeops.db")
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_DB="+db, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
	)
	env = append(env, testrunner.Env(t, home)...)
	b := startBotProc(t, env)
	b.say("make a file")
	id := b.expect(`^\[main\] \? approval (\w+): Bash`)[1]
	b.say("/thread late") // a fresh thread: a message there would start a claude
	b.expect(`^\[late\] \* switched to thread late$`)
	start := time.Now()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	b.waitLog(`msg="shutdown: stopped intake"`)
	b.say("too late")
	b.expect(`^\[main\] ! approval ` + id + `: Expired: the bot is shutting down\.$`)
	<-b.done
	if err := b.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	logOrder(t, b.logLines(), "shutting down",
		"shutdown: stopping intake", "shutdown: stopped intake",
		"shutdown: stopping scheduler", "shutdown: stopped scheduler",
		"shutdown: stopping sessions", "shutdown: stopped sessions",
		"shutdown: closing adapters", "shutdown: closed adapters",
		"shutdown: closed store")
	for _, r := range api.Requests() {
		if strings.Contains(r.Transcript(), "too late") {
			t.Errorf("a message sent after intake stopped reached Claude: %q", r.LastUserText())
		}
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("shutdown took %s", took)
	}
	if pids := processesWithEnv("HOME=" + home); len(pids) > 0 {
		t.Errorf("claude processes left: %v", pids)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if a, ok, _ := st.GetApproval(context.Background(), id); !ok || a.State != "expired" {
		t.Errorf("approval after shutdown: %+v", a)
	}
	threads, err := st.ListThreads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range threads {
		if strings.HasSuffix(th.Key, "/late") {
			t.Errorf("a message sent after intake stopped made a thread: %+v", th)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "later.txt")); !os.IsNotExist(err) {
		t.Errorf("the unapproved command ran: %v", err)
	}
}
