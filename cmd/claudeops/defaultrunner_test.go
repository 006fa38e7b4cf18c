package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
)

// TestDefaultRunner: without CLAUDEOPS_RUNNER the start chooses the
// sandbox where bubblewrap works (the real one, asked to make its
// namespaces), else local with a warning that says what that means and
// how to have the sandbox or to silence it. A runner that is set always
// wins, the sandbox without bubblewrap included: that start is refused.
func TestDefaultRunner(t *testing.T) {
	bwrap := testcli.Bwrap(t)
	dir := t.TempDir()
	broken := filepath.Join(dir, "bwrap-without-namespaces")
	// What bwrap says where the host forbids user namespaces (a
	// container's seccomp profile, a hardened kernel).
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-bwrap")
	tests := []struct {
		name    string
		env     []string
		kind    string
		why     string   // in the reason /readyz shows
		warning []string // each in the warning; none: no warning
		problem string   // a problem of the start's checks
	}{
		{"bubblewrap works", []string{"CLAUDEOPS_SANDBOX_BWRAP=" + bwrap}, "sandbox", "the default: bubblewrap works", nil, ""},
		{"no bubblewrap", []string{"CLAUDEOPS_SANDBOX_BWRAP=" + missing}, "local", "the default without a working bubblewrap (find bubblewrap",
			[]string{"not sandboxed", "can read and change everything", "apt-get install bubblewrap", "CLAUDEOPS_RUNNER=local"}, ""},
		{"bubblewrap cannot make namespaces", []string{"CLAUDEOPS_SANDBOX_BWRAP=" + broken}, "local", "No permissions to create new namespace",
			[]string{"not sandboxed", "No permissions to create new namespace", "apt-get install bubblewrap"}, ""},
		{"an empty CLAUDEOPS_RUNNER is the default", []string{"CLAUDEOPS_RUNNER=", "CLAUDEOPS_SANDBOX_BWRAP=" + bwrap}, "sandbox", "the default", nil, ""},
		{"local chosen knowingly", []string{"CLAUDEOPS_RUNNER=local", "CLAUDEOPS_SANDBOX_BWRAP=" + missing}, "local", "set by CLAUDEOPS_RUNNER", nil, ""},
		{"local set where bubblewrap works", []string{"CLAUDEOPS_RUNNER=local", "CLAUDEOPS_SANDBOX_BWRAP=" + bwrap}, "local", "set by CLAUDEOPS_RUNNER", nil, ""},
		{"the sandbox set without bubblewrap", []string{"CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_SANDBOX_BWRAP=" + missing}, "sandbox", "set by CLAUDEOPS_RUNNER", nil,
			"CLAUDEOPS_SANDBOX_BWRAP=" + missing + ": not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
				"CLAUDEOPS_STATE_DIR=" + t.TempDir(), "CLAUDEOPS_WORKDIR=" + t.TempDir(),
				"CLAUDEOPS_CLAUDE_BIN=" + fakeCLI(t, "2.1.330")}, tt.env...)
			c, err := loadConfig(env)
			if err != nil {
				t.Fatal(err)
			}
			warning := c.Runner.choose(t.Context())
			if c.Runner.Kind != tt.kind || !strings.Contains(c.Runner.why, tt.why) {
				t.Errorf("runner %q (%s), want %q (%s)", c.Runner.Kind, c.Runner.why, tt.kind, tt.why)
			}
			if (warning != "") != (tt.warning != nil) {
				t.Errorf("warning %q, want one: %v", warning, tt.warning != nil)
			}
			for _, w := range tt.warning {
				if !strings.Contains(warning, w) {
					t.Errorf("the warning lacks %q: %s", w, warning)
				}
			}
			var said []string
			bad, _ := startChecks(t.Context(), c, true)
			for _, p := range bad {
				said = append(said, p.line(c.raw))
			}
			all := strings.Join(said, "\n")
			if tt.problem == "" && all != "" || !strings.Contains(all, tt.problem) {
				t.Errorf("the start's problems:\n%s\nwant %q", all, tt.problem)
			}
		})
	}
}

// TestDefaultRunnerConsole: the README's first command as a newcomer runs
// it: no credentials of a platform (the console), no setting of the bot,
// a fresh home, `claude` on PATH. Where bubblewrap is on PATH the
// session's CLI runs sandboxed; where PATH lacks it, it runs as the
// bot's child, and the log and /readyz say so. The oracle is the kernel's:
// the CLI's mount namespace against the bot's, and its parent's name.
func TestDefaultRunnerConsole(t *testing.T) {
	bin, bwrap := testcli.Bin(t), testcli.Bwrap(t)
	for _, tt := range []struct {
		name      string
		withBwrap bool
	}{{"bubblewrap on PATH", true}, {"no bubblewrap on PATH", false}} {
		t.Run(tt.name, func(t *testing.T) {
			api := fakeanthropic.Start(t, fakeanthropic.ChatScript(nil))
			path := pathWithout(t, bwrap, tt.withBwrap, bin)
			work := t.TempDir()
			env := testkit.CLIEnv(t.TempDir(), api.URL, "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0", "CLAUDEOPS_RUNNER=")
			env = append(env, "PATH="+path) // the later entry wins
			cmd := exec.Command(os.Args[0])
			cmd.Dir = work
			b := startBotCmd(t, cmd, env)
			o := newOpsView(t, func() string { return strings.Join(b.logLines(), "\n") })
			b.say("hello")
			b.expect(`^\[main\] claude: ok: .*hello$`)

			cli := cliProcess(t, b.cmd.Process.Pid, bin)
			sameNS := readLink(t, cli, "ns/mnt") == readLink(t, b.cmd.Process.Pid, "ns/mnt")
			parent := procComm(t, parentOf(t, cli))
			_, d := o.ready()
			log := strings.Join(b.logLines(), "\n")
			if tt.withBwrap {
				if sameNS || parent != "bwrap" {
					t.Errorf("the CLI (pid %d) shares the bot's mount namespace: %v; its parent is %q: want it inside bwrap", cli, sameNS, parent)
				}
				if d.Runner.Name != "sandbox" || !strings.Contains(d.Runner.Why, "default") || strings.Contains(log, "level=WARN msg=\"sessions run with the local runner") {
					t.Errorf("/readyz runner %+v; log:\n%s", d.Runner, log)
				}
			} else {
				if !sameNS || parent == "bwrap" {
					t.Errorf("the CLI (pid %d) in the bot's mount namespace: %v, its parent %q: want a local child", cli, sameNS, parent)
				}
				if d.Runner.Name != "local" || !strings.Contains(d.Runner.Why, "bubblewrap") {
					t.Errorf("/readyz runner %+v, want local and why", d.Runner)
				}
				for _, w := range []string{`level=WARN msg="sessions run with the local runner, not sandboxed`, "apt-get install bubblewrap", "CLAUDEOPS_RUNNER=local"} {
					if !strings.Contains(log, w) {
						t.Errorf("the log lacks %q:\n%s", w, log)
					}
				}
			}
			if err := b.endInput(90 * time.Second); err != nil {
				t.Errorf("bot exit: %v", err)
			}
		})
	}
}

// pathWithout is a PATH of one directory holding links to every program
// of the test's PATH, with `claude` the CLI under test, and bubblewrap
// only when with is set.
func pathWithout(t *testing.T, bwrap string, with bool, cli string) string {
	t.Helper()
	dir := t.TempDir()
	link := func(name, target string) {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return // the first on PATH wins
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("claude", cli)
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			p := filepath.Join(d, e.Name())
			if real, _ := filepath.EvalSymlinks(p); !with && (e.Name() == "bwrap" || real == bwrap) {
				continue
			}
			link(e.Name(), p)
		}
	}
	return dir
}

// cliProcess is the pid of the one process below pid whose program is the
// CLI bin.
func cliProcess(t *testing.T, pid int, bin string) int {
	t.Helper()
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	var found []int
	for _, p := range descendants(pid) {
		argv0, _, _ := strings.Cut(p.cmdline, " ")
		if r, _ := filepath.EvalSymlinks(argv0); argv0 == bin || argv0 == real || r == real {
			found = append(found, p.pid)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the CLI %s below the bot (%d): %v, want one", bin, pid, found)
	}
	return found[0]
}

// descendants are the live processes below pid, by their parents.
func descendants(pid int) []proc {
	children := map[int][]proc{}
	for _, p := range allProcs() {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []proc
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

func parentOf(t *testing.T, pid int) int {
	t.Helper()
	p, ok := readProc(pid)
	if !ok {
		t.Fatalf("process %d is gone", pid)
	}
	return p.ppid
}

func procComm(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func readLink(t *testing.T, pid int, name string) string {
	t.Helper()
	l, err := os.Readlink(fmt.Sprintf("/proc/%d/%s", pid, name))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestDefaultRunnerTerminal: the console at a terminal keeps its log in a
// file; the warning that sessions are not sandboxed is also said on the
// terminal, before the conversation. Chosen knowingly, it is not.
func TestDefaultRunnerTerminal(t *testing.T) {
	const said = "claudeops: sessions run with the local runner, not sandboxed"
	for _, tt := range []struct {
		name   string
		runner string
		shown  bool
	}{{"no bubblewrap", "CLAUDEOPS_RUNNER=", true}, {"local chosen", "CLAUDEOPS_RUNNER=local", false}} {
		t.Run(tt.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8", "ANTHROPIC_API_KEY=sk-test",
				"CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_WORKDIR=" + t.TempDir(), "CLAUDEOPS_CLAUDE_BIN=" + fakeCLI(t, "2.1.330"),
				"CLAUDEOPS_SANDBOX_BWRAP=" + filepath.Join(t.TempDir(), "no-bwrap"), tt.runner}
			o := oneTerminal(t)
			p := startConsoleTyped(t, env, nil, o.stdout, o.stderr)
			o.stdout.Close()
			o.stderr.Close()
			waitOutput(t, o.conv, "type a message for Claude")
			p.finish(t)
			if got := strings.Contains(o.conv(), said); got != tt.shown {
				t.Errorf("the terminal shows the warning: %v, want %v:\n%s", got, tt.shown, o.conv())
			}
			log, err := os.ReadFile(filepath.Join(state, "claudeops.log"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(log), `level=WARN msg="sessions run with the local runner`); got != tt.shown {
				t.Errorf("the log file holds the warning: %v, want %v:\n%s", got, tt.shown, log)
			}
		})
	}
}
