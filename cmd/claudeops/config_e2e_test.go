package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testrunner"
)

// runOnce runs the bot's binary (this test binary re-executed as main, see
// TestMain) with env and empty input, to its end: `claudeops console`, or
// args. With cred set it runs as that user.
func runOnce(t *testing.T, bin string, env []string, cred *syscall.Credential, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if len(args) == 0 {
		args = []string{"console"}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(testrunner.Explicit(env), "CLAUDEOPS_TEST_RUN_MAIN=1")
	cmd.Stdin = strings.NewReader("")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		code = ee.ExitCode()
	default:
		t.Fatalf("run the bot: %v\n%s", err, errb.String())
	}
	return code, out.String(), errb.String()
}

// sharedDir is a temporary directory every user may enter (t.TempDir's
// are 0700), for runs as another user; removed at the end, whatever modes
// the test left inside.
func sharedDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "claudeops-"+regexp.MustCompile(`\W`).ReplaceAllString(t.Name(), "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		if err := os.RemoveAll(d); err != nil {
			t.Errorf("remove %s: %v", d, err)
		}
	})
	return d
}

// versionOnlyCLI is a claude that answers --version only: the
// configuration tests need its check to pass, not a session.
func versionOnlyCLI(t *testing.T, dir, version string) string {
	t.Helper()
	p := filepath.Join(dir, "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+version+" (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// reportedProblems are the lines the bot printed for its configuration
// problems, and the count its summary line gives (-1: no summary).
func reportedProblems(stderr string) ([]string, int) {
	var lines []string
	n := -1
	summary := regexp.MustCompile(`^claudeops: (\d+) configuration problems?; nothing was started$`)
	for l := range strings.SplitSeq(stderr, "\n") {
		if rest, ok := strings.CutPrefix(l, "claudeops: configuration: "); ok {
			lines = append(lines, rest)
		}
		if m := summary.FindStringSubmatch(l); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
	}
	return lines, n
}

// TestMisconfigurationsExit78: each finding of issue 13, and more, as an
// operator meets them: the binary exits 78 (72 for a missing CLI alone)
// before anything starts (the state directory is not even created), and
// prints every problem at once, one line each naming the variable and its
// value; nothing else is reported.
func TestMisconfigurationsExit78(t *testing.T) {
	base := t.TempDir()
	cli := versionOnlyCLI(t, base, "2.1.330")
	oldCLI := versionOnlyCLI(t, t.TempDir(), "1.0.22")
	aFile := filepath.Join(base, "a-file")
	if err := os.WriteFile(aFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string // with dir, the test's own directory, for "{dir}"
		args []string // nil: console (the platforms' checks need a plain run)
		code int
		want []string // one substring per problem line, in order
	}{
		{"approvals that never expire", []string{"CLAUDEOPS_APPROVAL_TIMEOUT=-5m"}, nil, 78, []string{"CLAUDEOPS_APPROVAL_TIMEOUT=-5m: want a duration above 0"}},
		{"a log level nobody knows", []string{"CLAUDEOPS_LOG_LEVEL=loud"}, nil, 78, []string{"CLAUDEOPS_LOG_LEVEL=loud: want debug, info, warn or error"}},
		{"idle timeout 0", []string{"CLAUDEOPS_IDLE_TIMEOUT=0"}, nil, 78, []string{"CLAUDEOPS_IDLE_TIMEOUT=0: want a duration above 0"}},
		{"idle timeout negative", []string{"CLAUDEOPS_IDLE_TIMEOUT=-1s"}, nil, 78, []string{"CLAUDEOPS_IDLE_TIMEOUT=-1s: want a duration above 0"}},
		{"negative run history", []string{"CLAUDEOPS_SCHEDULE_KEEP_RUNS=-3"}, nil, 78, []string{"CLAUDEOPS_SCHEDULE_KEEP_RUNS=-3: want a whole number, at least 1"}},
		{"a missing working directory", []string{"CLAUDEOPS_WORKDIR={dir}/nowhere"}, nil, 78, []string{"CLAUDEOPS_WORKDIR={dir}/nowhere: does not exist: want an existing directory"}},
		{"a file as working directory", []string{"CLAUDEOPS_WORKDIR=" + aFile}, nil, 78, []string{"CLAUDEOPS_WORKDIR=" + aFile + ": is not a directory"}},
		{"an address without a port", []string{"CLAUDEOPS_HTTP_ADDR=not-an-addr"}, nil, 78, []string{"CLAUDEOPS_HTTP_ADDR=not-an-addr: want host:port"}},
		{"a zone on Mars", []string{"CLAUDEOPS_SCHEDULE_TZ=Mars/Base"}, nil, 78, []string{"CLAUDEOPS_SCHEDULE_TZ=Mars/Base: want an IANA time zone"}},
		{"a file as state directory", []string{"CLAUDEOPS_STATE_DIR=" + aFile}, nil, 78, []string{"CLAUDEOPS_STATE_DIR=" + aFile + ": " + aFile + " is not a directory"}},
		{"a state directory under a file", []string{"CLAUDEOPS_STATE_DIR=" + aFile + "/state"}, nil, 78, []string{"cannot be created: " + aFile + " is not a directory"}},
		{"a database that is a directory", []string{"CLAUDEOPS_DB={dir}"}, nil, 78, []string{"CLAUDEOPS_DB={dir}: {dir} is not a regular file"}},
		{"the CLI missing, alone: 72", []string{"CLAUDEOPS_CLAUDE_BIN={dir}/no-claude"}, nil, 72, []string{"CLAUDEOPS_CLAUDE_BIN={dir}/no-claude: claude CLI \"{dir}/no-claude\" not found"}},
		{"a CLI older than supported", []string{"CLAUDEOPS_CLAUDE_BIN=" + oldCLI}, nil, 78, []string{"older than the minimum supported"}},
		{"an unknown runner", []string{"CLAUDEOPS_RUNNER=kubernets"}, nil, 78, []string{`CLAUDEOPS_RUNNER must be local, sandbox, docker or kubernetes, got "kubernets"`}},
		{"a sandbox without bubblewrap", []string{"CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_SANDBOX_BWRAP={dir}/no-bwrap"}, nil, 78, []string{"CLAUDEOPS_SANDBOX_BWRAP={dir}/no-bwrap: not found"}},
		{"Slack half set up", []string{"SLACK_APP_TOKEN=xapp-1-secret", "SLACK_SIGNING_SECRET=shh-secret"}, []string{"run"}, 78, []string{
			"SLACK_BOT_TOKEN is required with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET",
			"SLACK_SIGNING_SECRET is set but CLAUDEOPS_HTTP_ADDR is not",
		}},
		{"Matrix without its user", []string{"MATRIX_HOMESERVER=http://127.0.0.1:1", "MATRIX_ACCESS_TOKEN=syt-secret"}, []string{"run"}, 78, []string{"MATRIX_USER_ID is required with MATRIX_HOMESERVER"}},
		{"everything at once", []string{
			"CLAUDEOPS_APPROVAL_TIMEOUT=-5m", "CLAUDEOPS_LOG_LEVEL=loud", "CLAUDEOPS_IDLE_TIMEOUT=0", "CLAUDEOPS_SCHEDULE_KEEP_RUNS=-3",
			"CLAUDEOPS_WORKDIR={dir}/nowhere", "CLAUDEOPS_HTTP_ADDR=not-an-addr", "CLAUDEOPS_SCHEDULE_TZ=Mars/Base",
			"CLAUDEOPS_MAX_SESSIONS=zero", "CLAUDEOPS_CLAUDE_BIN={dir}/no-claude",
		}, nil, 78, []string{
			"CLAUDEOPS_MAX_SESSIONS=zero: want a whole number",
			"CLAUDEOPS_IDLE_TIMEOUT=0: want a duration above 0",
			"CLAUDEOPS_APPROVAL_TIMEOUT=-5m: want a duration above 0",
			"CLAUDEOPS_LOG_LEVEL=loud: want debug, info, warn or error",
			"CLAUDEOPS_HTTP_ADDR=not-an-addr: want host:port",
			"CLAUDEOPS_SCHEDULE_TZ=Mars/Base: want an IANA time zone",
			"CLAUDEOPS_SCHEDULE_KEEP_RUNS=-3: want a whole number, at least 1",
			"CLAUDEOPS_WORKDIR={dir}/nowhere: does not exist",
			"CLAUDEOPS_CLAUDE_BIN={dir}/no-claude: claude CLI \"{dir}/no-claude\" not found",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			state := filepath.Join(dir, "state")
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8",
				"CLAUDEOPS_WORKDIR=" + t.TempDir(), "CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_CLAUDE_BIN=" + cli}
			for _, kv := range tt.env {
				env = append(env, strings.ReplaceAll(kv, "{dir}", dir))
			}
			code, stdout, stderr := runOnce(t, os.Args[0], env, nil, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
			lines, n := reportedProblems(stderr)
			if n != len(tt.want) || len(lines) != len(tt.want) {
				t.Errorf("%d problem lines, summary says %d; want %d", len(lines), n, len(tt.want))
			}
			for i, w := range tt.want {
				w = strings.ReplaceAll(w, "{dir}", dir)
				if i >= len(lines) || !strings.Contains(lines[i], w) {
					t.Errorf("problem %d: want a line with %q", i+1, w)
				}
			}
			if strings.Contains(stderr, "secret") {
				t.Errorf("a secret's value was printed")
			}
			if stdout != "" {
				t.Errorf("the console started: %q", stdout)
			}
			if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused start created the state directory (%v)", err)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr)
			}
		})
	}
}

// TestCorrectConfigurationStarts: the same harness with nothing wrong:
// the console starts with no credentials set, and, its input empty, exits
// 0, with its state created. (The real CLI has a session in
// TestOneBotPerDatabase.)
func TestCorrectConfigurationStarts(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8",
		"CLAUDEOPS_WORKDIR=" + t.TempDir(), "CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_CLAUDE_BIN=" + versionOnlyCLI(t, t.TempDir(), "2.1.330"),
		"CLAUDEOPS_HTTP_ADDR=127.0.0.1:0", "CLAUDEOPS_SCHEDULE_MIN_INTERVAL=0", "CLAUDEOPS_MAX_THREADS_PER_USER=0", "CLAUDEOPS_LOG_LEVEL=DEBUG"}
	code, stdout, stderr := runOnce(t, os.Args[0], env, nil)
	if code != 0 || !strings.HasPrefix(stdout, "claudeops console:") {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	for _, f := range []string{state, filepath.Join(state, "claudeops.db"), filepath.Join(state, "claudeops.db.lock")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("after a start: %v", err)
		}
	}
	if strings.Contains(stderr, "configuration:") {
		t.Errorf("a correct configuration reported problems:\n%s", stderr)
	}
}

// unprivileged is who runs the bot in TestUnwritableStateExits78: as root
// the file modes under test do not apply, so there it is nobody; else the
// test's own user.
func unprivileged(t *testing.T) (cred *syscall.Credential, uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil, os.Geteuid(), os.Getegid()
	}
	return &syscall.Credential{Uid: 65534, Gid: 65534}, 65534, 65534
}

// copyBinary copies this test binary where another user can run it.
func copyBinary(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "claudeops")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUnwritableStateExits78: a database the bot cannot write, and state
// directories it cannot create or write in, stop it with exit 78 and a
// line naming the path, before it opens anything: the database's bytes
// are unchanged and no side file appears. The bot runs as an unprivileged
// user (nobody when the test runs as root).
func TestUnwritableStateExits78(t *testing.T) {
	cred, uid, gid := unprivileged(t)
	base := sharedDir(t)
	bin := copyBinary(t, base)
	cli := versionOnlyCLI(t, base, "2.1.330")
	// mk makes a directory of owner with mode; owner -1: the bot's user.
	mk := func(t *testing.T, p string, mode os.FileMode, owner int) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if owner == -1 {
			owner = uid
		}
		if err := os.Chown(p, owner, gid); err != nil && os.Geteuid() == 0 {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// db makes a SQLite-looking file of the bot's user with mode.
	db := func(t *testing.T, p string, mode os.FileMode) string {
		t.Helper()
		if err := os.WriteFile(p, []byte("SQLite format 3\x00"), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = os.Chown(p, uid, gid)
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name   string
		rootOK bool // meaningful only when the test runs as root (another owner)
		setup  func(t *testing.T, dir string) (env []string, want string)
	}{
		{"a read-only database file", false, func(t *testing.T, dir string) ([]string, string) {
			state := mk(t, dir+"/state", 0o700, -1)
			f := db(t, state+"/claudeops.db", 0o400)
			return []string{"CLAUDEOPS_STATE_DIR=" + state}, f + " cannot be opened for writing by the bot's user"
		}},
		{"a read-only WAL beside it", false, func(t *testing.T, dir string) ([]string, string) {
			state := mk(t, dir+"/state", 0o700, -1)
			db(t, state+"/claudeops.db", 0o600)
			f := db(t, state+"/claudeops.db-wal", 0o400)
			return []string{"CLAUDEOPS_STATE_DIR=" + state}, f + " cannot be opened for writing"
		}},
		{"a database in a read-only directory", false, func(t *testing.T, dir string) ([]string, string) {
			d := mk(t, dir+"/data", 0o755, -1)
			f := db(t, d+"/bot.db", 0o600)
			if err := os.Chmod(d, 0o555); err != nil {
				t.Fatal(err)
			}
			return []string{"CLAUDEOPS_DB=" + f}, "CLAUDEOPS_DB=" + f + ": the directory " + d + " is not writable by the bot's user"
		}},
		{"a state directory that cannot be created", false, func(t *testing.T, dir string) ([]string, string) {
			parent := mk(t, dir+"/ro", 0o555, -1)
			return []string{"CLAUDEOPS_STATE_DIR=" + parent + "/state"}, "the directory " + parent + "/state cannot be created: " + parent + " is not writable by the bot's user"
		}},
		{"a state directory of another user", true, func(t *testing.T, dir string) ([]string, string) {
			state := mk(t, dir+"/state", 0o755, 0)
			return []string{"CLAUDEOPS_STATE_DIR=" + state}, "the directory " + state + " is not writable by the bot's user"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rootOK && os.Geteuid() != 0 {
				t.Skip("needs a directory of another user: run as root")
			}
			dir := mk(t, filepath.Join(base, regexp.MustCompile(`\W`).ReplaceAllString(tt.name, "_")), 0o755, -1)
			home := mk(t, dir+"/home", 0o700, -1)
			work := mk(t, dir+"/work", 0o700, -1)
			extra, want := tt.setup(t, dir)
			before := snapshot(t, dir)
			env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8",
				"CLAUDEOPS_WORKDIR=" + work, "CLAUDEOPS_CLAUDE_BIN=" + cli}, extra...)
			code, stdout, stderr := runOnce(t, bin, env, cred)
			lines, n := reportedProblems(stderr)
			if code != 78 || n != 1 || len(lines) != 1 || !strings.Contains(lines[0], want) {
				t.Errorf("exit %d, %d problems (summary %d); want 78 and one line with %q\nstdout: %s\nstderr:\n%s", code, len(lines), n, want, stdout, stderr)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("a refused start changed the files:\n%s\nthen\n%s", before, after)
			}
		})
	}
}

// snapshot lists what is under root with each entry's mode, size and
// modification time, for before/after comparisons.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s %d %d\n", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
