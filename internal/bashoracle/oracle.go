package bashoracle

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Oracle runs commands under Bash and reports what they did. Set Limit
// before a Run; one Oracle may Run from several goroutines.
type Oracle struct {
	Limit time.Duration // how long one run may take; 5 s from New

	bash  string
	root  string // stubs/ and one directory per run
	stubs string
	cred  *syscall.Credential // nil: as the current user
}

// standaloneStubs are stubbed too when nothing else is on PATH; a harness
// around the real CLI keeps them real, since the CLI needs them.
var standaloneStubs = []string{"sh", "bash", "env", "true", "false"}

// New builds an oracle for tb, removed when tb ends. It skips the test
// when there is no bash.
func New(tb testing.TB) *Oracle {
	tb.Helper()
	bash := "/bin/bash"
	if _, err := os.Stat(bash); err != nil {
		if bash, err = exec.LookPath("bash"); err != nil {
			tb.Skip("no bash")
		}
	}
	// Not tb.TempDir: its parents are 0700, out of reach of nobody.
	root, err := os.MkdirTemp("", "claudeops-bash-oracle-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	o := &Oracle{Limit: 5 * time.Second, bash: bash, root: root, stubs: filepath.Join(root, "stubs"), cred: User()}
	if o.cred == nil {
		tb.Logf("not root: the oracle runs commands as uid %d, not as %d", os.Getuid(), Nobody)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := MakeDirs(nil, o.stubs); err != nil {
		tb.Fatal(err)
	}
	if err := WriteStubs(o.stubs, append(append([]string{}, Stubs...), standaloneStubs...)); err != nil {
		tb.Fatal(err)
	}
	return o
}

// Script is how Claude Code 2.1.330 has bash -c run cmd, with the
// oracle's trap, writing to descriptor 3, set just before the eval.
func Script(cmd string) string {
	return "shopt -s expand_aliases\nshopt -u extglob\n" + Trap(">&3") +
		"eval '" + strings.ReplaceAll(cmd, "'", `'\''`) + "' < /dev/null\n"
}

// Run runs cmd in a fresh work directory. An error means the oracle could
// not watch the run, never that the command failed.
func (o *Oracle) Run(cmd string) (Report, error) {
	dir, err := os.MkdirTemp(o.root, "run")
	if err != nil {
		return Report{}, fmt.Errorf("oracle dir: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return Report{}, fmt.Errorf("oracle dir: %w", err)
	}
	work, logs, tmp := filepath.Join(dir, "work"), filepath.Join(dir, "logs"), filepath.Join(dir, "tmp")
	if err := MakeDirs(o.cred, work, logs, tmp); err != nil {
		return Report{}, err
	}
	if err := Seed(work, o.cred); err != nil {
		return Report{}, err
	}
	before, err := Snapshot(work)
	if err != nil {
		return Report{}, err
	}
	traced, rep, err := o.exec(cmd, work, logs, tmp)
	if err != nil {
		return rep, err
	}
	recs := Records(traced)
	if len(recs) == 0 || !strings.HasPrefix(recs[0], "eval '") {
		return rep, fmt.Errorf("trace does not start with the eval: %q", recs)
	}
	rep.Traced = recs[1:]
	if rep.Calls, err = readLogs(logs); err != nil {
		return rep, err
	}
	after, err := Snapshot(work)
	if err != nil {
		return rep, err
	}
	rep.Changed = Changed(before, after)
	return rep, nil
}

// exec runs cmd's script under bash and returns the raw trace, with the
// timeout and stderr in the report.
func (o *Oracle) exec(cmd, work, logs, tmp string) ([]byte, Report, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, Report{}, fmt.Errorf("trace pipe: %w", err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), o.Limit)
	defer cancel()
	c := exec.CommandContext(ctx, o.bash, "-c", Script(cmd))
	var stderr bytes.Buffer
	c.Dir, c.Stderr, c.ExtraFiles = work, &stderr, []*os.File{w}
	c.Env = []string{"PATH=" + o.stubs, "HOME=" + work, "TMPDIR=" + tmp, LogsVar + "=" + logs, "LANG=C.UTF-8"}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: o.cred}
	// Kill the whole group: background jobs and stubs too.
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	if err := c.Start(); err != nil {
		w.Close()
		return nil, Report{}, fmt.Errorf("start bash: %w", err)
	}
	w.Close()
	countRun()
	_ = r.SetReadDeadline(time.Now().Add(o.Limit + time.Second))
	var trace bytes.Buffer
	_, _ = trace.ReadFrom(r) // EOF once bash and everything it started are gone
	_ = c.Wait()             // the exit status does not matter
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	return trace.Bytes(), Report{Timeout: ctx.Err() != nil, Stderr: stderr.String()}, nil
}

// countRun appends a byte to $CLAUDEOPS_ORACLE_COUNT, when set, so that a
// fuzzing session can tell how many commands it ran under Bash.
func countRun() {
	name := os.Getenv("CLAUDEOPS_ORACLE_COUNT")
	if name == "" {
		return
	}
	if f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		_, _ = f.Write([]byte{'.'})
		f.Close()
	}
}

// readLogs reads every stub log in dir.
func readLogs(dir string) ([][]string, error) {
	files, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("stub log: %w", err)
	}
	var calls [][]string
	for _, f := range files {
		cs, err := ReadCalls(filepath.Join(dir, f.Name()))
		if err != nil {
			return nil, err
		}
		calls = append(calls, cs...)
	}
	return calls, nil
}
