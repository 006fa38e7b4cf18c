package approvals

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/bashoracle"
)

// TestHostileVectorsAreReal is the oracle outside our code for
// hostileVectors: each hostile command, run under real Bash with the real
// programs the way Claude Code runs it (bashoracle.Script), as an
// unprivileged user in a fresh directory, creates or changes the file it
// names. So each vector the derived rules refuse is one that exists. A
// vector whose program is not installed (or not reachable by that user)
// is skipped, saying so.
func TestHostileVectorsAreReal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real programs: not with -short")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root, err := os.MkdirTemp("", "claudeops-vectors-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	cred := bashoracle.User()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(root, "cache") // Go's build cache, kept across vectors
	if err := bashoracle.MakeDirs(cred, shared); err != nil {
		t.Fatal(err)
	}
	for i, v := range hostileVectors {
		t.Run(v.name, func(t *testing.T) {
			if v.noOracle != "" {
				t.Skip(v.noOracle)
			}
			r := vectorRun{bash: bash, cred: cred, dir: filepath.Join(root, fmt.Sprint(i)), cache: shared}
			if err := r.prepare(); err != nil {
				t.Fatal(err)
			}
			for _, prog := range append([]string{firstWord(v.hostile)}, v.needs...) {
				if out, err := r.run("command -v "+prog, false); err != nil {
					t.Skipf("%s is not installed here (or not reachable as this user): %v %s", prog, err, out)
				}
			}
			if v.setup != "" {
				if out, err := r.run(v.setup, false); err != nil {
					t.Fatalf("setup: %v\n%s", err, out)
				}
			}
			before, err := bashoracle.Snapshot(r.work())
			if err != nil {
				t.Fatal(err)
			}
			out, _ := r.run(v.hostile, true) // the exit status does not matter
			after, err := bashoracle.Snapshot(r.work())
			if err != nil {
				t.Fatal(err)
			}
			if changed := bashoracle.Changed(before, after); !slices.Contains(changed, v.want) {
				t.Errorf("%q did not create or change %s (changed: %q)\n%s", v.hostile, v.want, changed, out)
			}
		})
	}
}

// vectorRun is one vector's directory: work/ (the working directory,
// with a.txt, b.txt and evil.sh), home/ and tmp/.
type vectorRun struct {
	bash, dir, cache string
	cred             *syscall.Credential
}

func (r vectorRun) work() string { return filepath.Join(r.dir, "work") }

// prepare makes the directories and the starting files, owned by the
// user the commands run as.
func (r vectorRun) prepare() error {
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		return fmt.Errorf("vector dir: %w", err)
	}
	w := r.work()
	if err := bashoracle.MakeDirs(r.cred, w, filepath.Join(r.dir, "home"), filepath.Join(r.dir, "tmp")); err != nil {
		return err
	}
	// evil.sh marks that it ran, and answers as a kubectl credential.
	evil := "#!/bin/sh\ntouch '" + filepath.Join(w, "pwned") + "'\n" +
		`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}'` + "\n"
	files := map[string]string{"a.txt": "x\n", "b.txt": "y\n", "evil.sh": evil}
	for name, content := range files {
		p := filepath.Join(w, name)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			return fmt.Errorf("vector file: %w", err)
		}
		if r.cred != nil {
			if err := os.Chown(p, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
				return fmt.Errorf("vector file: %w", err)
			}
		}
	}
	return nil
}

// run runs script under bash in work/; traced: as Claude Code runs a
// command (bashoracle.Script, its trace discarded), else as it is.
func (r vectorRun) run(script string, traced bool) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if traced {
		script = bashoracle.Script(script)
	}
	c := exec.CommandContext(ctx, r.bash, "-c", script)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return "", err
	}
	defer devnull.Close()
	var out bytes.Buffer
	c.Dir, c.Stdout, c.Stderr, c.ExtraFiles = r.work(), &out, &out, []*os.File{devnull}
	c.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(r.dir, "home"), "TMPDIR=" + filepath.Join(r.dir, "tmp"),
		"LANG=C.UTF-8", "GOCACHE=" + r.cache, "GOTOOLCHAIN=local", "GOFLAGS=", "GOPROXY=off",
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: r.cred}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	err = c.Run()
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	return out.String(), err
}
