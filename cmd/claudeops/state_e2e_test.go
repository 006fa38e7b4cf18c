package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// withUmask runs start (which forks) under umask m: the child keeps it.
func withUmask(m int, start func()) {
	old := syscall.Umask(m)
	defer syscall.Umask(old)
	start()
}

// wantMode stats p (the oracle: the file system, not our code).
func wantMode(t *testing.T, p string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Errorf("%s: %v", p, err)
		return
	}
	if got := st.Mode().Perm(); got != want {
		t.Errorf("%s: mode %o, want %o", p, got, want)
	}
}

// TestStateFilesPrivateAfterRealRun: the bot started as an operator would,
// told nothing about where to keep its state and under umask 0, with a
// state directory an earlier run left 0755. After a turn (a write) the
// state directory is 0700 and the database, its WAL and its shared-memory
// file are 0600; nothing of the bot's is in the working directory.
func TestStateFilesPrivateAfterRealRun(t *testing.T) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted")}}
	})
	home, work := t.TempDir(), t.TempDir()
	state := filepath.Join(home, ".local", "state", "claudeops")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
	)
	var b *botProc
	withUmask(0, func() { b = startBotProc(t, env) })
	b.say("note this")
	b.expect(`^\[main\] claude: noted$`)
	b.expect(`^\[main\] — ✓`) // the turn is stored

	db := filepath.Join(state, "claudeops.db")
	wantMode(t, state, 0o700)
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		wantMode(t, f, 0o600)
	}
	ents, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), "claudeops") {
			t.Errorf("the working directory holds %s", e.Name())
		}
	}
	b.stdin.Close()
	<-b.done
	if err := b.cmd.Wait(); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	wantMode(t, db, 0o600)
}

// TestSecretsNotInProcessEnvironment: the Slack tokens, given in the
// environment or as files, reach Slack (the fake sees the bot connect and
// answer) but neither the bot's /proc/<pid>/environ and cmdline nor any
// process a session starts: the claude the bot runs is a script that, like
// a tool an attacker has the model run, dumps its own environment and that
// of every ancestor before starting the real CLI.
func TestSecretsNotInProcessEnvironment(t *testing.T) {
	cli := testcli.Bin(t)
	for _, viaFile := range []bool{false, true} {
		name := map[bool]string{false: "environment", true: "files"}[viaFile]
		t.Run(name, func(t *testing.T) { testSecretsNotInProcessEnvironment(t, cli, viaFile) })
	}
}

// testSecretsNotInProcessEnvironment is one run of the bot, its tokens given
// in the environment or (viaFile) as files.
func testSecretsNotInProcessEnvironment(t *testing.T, cli string, viaFile bool) {
	botToken, appToken := "xoxb-secret-"+randHex(t), "xapp-secret-"+randHex(t)
	fs := fakeslack.Start(t, fakeslack.Options{BotToken: botToken, AppToken: appToken})
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("pong")}}
	})
	dir := t.TempDir()
	dump := filepath.Join(dir, "environs")
	claude := filepath.Join(dir, "claude")
	writeEnvironDumper(t, claude, dump, cli)
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDEOPS_STATE_DIR=" + t.TempDir(), "CLAUDEOPS_CLAUDE_BIN=" + claude, "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"SLACK_API_URL=" + fs.URL + "/api/", "CLAUDEOPS_ALLOWED_USERS=U0ALICE001",
		"CLAUDEOPS_TEST_RUN_MAIN=1",
	}
	env = append(env, slackTokenEnv(t, viaFile, botToken, appToken)...)
	cmd := exec.Command(os.Args[0])
	cmd.Env = testrunner.Explicit(env)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Up: the app token opened the Socket Mode connection.
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect to Slack; its log:\n%s", stderr.String())
	}
	pid := cmd.Process.Pid
	secrets := []string{botToken, appToken}
	checkProcHidesSecrets(t, pid, secrets, "when up")

	ts := fs.Post("U0ALICE001", "C0GENERAL1", "<@U0FAKEBOT1> ping")
	if !fs.WaitFor(90*time.Second, func() bool {
		for _, m := range fs.Thread("C0GENERAL1", ts) {
			if m.BotID != "" && strings.Contains(m.VisibleText(), "pong") {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no answer in the thread: %+v\nlog:\n%s", fs.Thread("C0GENERAL1", ts), stderr.String())
	}
	checkProcHidesSecrets(t, pid, secrets, "after a session")
	checkDumpHidesSecrets(t, dump, pid, secrets)

	// A clean stop, so that no claude writes into the temp dirs
	// while they are removed.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("the bot did not stop after SIGTERM")
	}
}

// writeEnvironDumper writes to path the claude the bot runs: a script that
// appends the environment and command line of itself and every ancestor to
// dump, then starts the real CLI cli.
func writeEnvironDumper(t *testing.T, path, dump, cli string) {
	t.Helper()
	script := `#!/bin/sh
{
  p=$$
  while [ "$p" -gt 1 ]; do
    echo "== pid $p"
    tr '\0' '\n' < /proc/$p/environ
    echo "-- cmdline"
    tr '\0' ' ' < /proc/$p/cmdline
    echo
    p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2)
  done
} >> '` + dump + `' 2>&1
exec '` + cli + `' "$@"
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// slackTokenEnv gives the bot its tokens as an operator would: in the
// environment, or (viaFile) as the _FILE twins naming private files.
func slackTokenEnv(t *testing.T, viaFile bool, botToken, appToken string) []string {
	t.Helper()
	var env []string
	if viaFile {
		for v, secret := range map[string]string{"SLACK_BOT_TOKEN_FILE": botToken, "SLACK_APP_TOKEN_FILE": appToken} {
			f := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(f, []byte(secret+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			env = append(env, v+"="+f)
		}
	} else {
		env = append(env, "SLACK_BOT_TOKEN="+botToken, "SLACK_APP_TOKEN="+appToken)
	}
	return env
}

// checkProcHidesSecrets reads what any process of the same user can see of
// the bot (pid): its environ, its cmdline and its open descriptors. when
// says at which point of the run, for the failure message.
func checkProcHidesSecrets(t *testing.T, pid int, secrets []string, when string) {
	t.Helper()
	for _, f := range []string{"environ", "cmdline"} {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append(secrets, "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN") { // the _FILE twins too
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s: /proc/%d/%s holds %s", when, pid, f, s)
			}
		}
	}
	fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name()); strings.Contains(l, "claudeops-secrets") {
			t.Errorf("%s: the secrets' descriptor is still open: fd %s → %s", when, fd.Name(), l)
		}
	}
}

// checkDumpHidesSecrets reads what the session's processes saw of their
// own and their ancestors' environments; first that the dump reached the
// bot (pid), so that an empty dump cannot pass.
func checkDumpHidesSecrets(t *testing.T, dump string, pid int, secrets []string) {
	t.Helper()
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("== pid "+strconv.Itoa(pid)+"\n")) || !bytes.Contains(b, []byte("CLAUDEOPS_WORKDIR=")) {
		t.Fatalf("the dump did not reach the bot's own environment:\n%s", b)
	}
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("a process the session started saw %s:\n%s", s, b)
		}
	}
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func randHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
