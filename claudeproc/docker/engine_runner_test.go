package docker

import (
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/claudeops/claudeops/claudeproc"
)

// --- the runner alone, with small commands -------------------------------

// raw is one container started through Runner.Start with plain pipes.
type raw struct {
	h              claudeproc.Handle
	stdin          *os.File
	stdout, stderr chan string // everything read, at EOF
}

func startRaw(t *testing.T, r *Runner, dir string, env []string, sess claudeproc.Session, bin string, args ...string) (*raw, error) {
	t.Helper()
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	h, err := r.Start(context.Background(), claudeproc.Spec{
		Bin: bin, Args: args, Dir: dir, Env: env, Session: sess,
		Stdin: inR, Stdout: outW, Stderr: errW,
	})
	if err != nil {
		inW.Close()
		return &raw{stdout: readAll(outR), stderr: readAll(errR)}, err
	}
	return &raw{h: h, stdin: inW, stdout: readAll(outR), stderr: readAll(errR)}, nil
}

func readAll(f *os.File) chan string {
	ch := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(f)
		f.Close()
		ch <- string(b)
	}()
	return ch
}

func recv(t *testing.T, ch chan string, what string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(eventTimeout):
		t.Fatalf("%s never ended", what)
		return ""
	}
}

// TestRunnerStdio: input reaches the CLI until the bot closes it, stdout
// and stderr arrive apart, the exit code comes back, and the output pipes
// end (the runner closed its ends).
func TestRunnerStdio(t *testing.T) {
	r := testRunner(t, nil)
	sess := claudeproc.Session{Channel: "test/stdio", Thread: "test/stdio/1"}
	c, err := startRaw(t, r, t.TempDir(), nil, sess, "/bin/sh", "-c", `cat; echo "to stderr" >&2; exit 3`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.h.Name(), "container ") {
		t.Errorf("Name = %q", c.h.Name())
	}
	if _, err := c.stdin.WriteString("line one\nline two\n"); err != nil {
		t.Fatal(err)
	}
	c.stdin.Close()
	st, err := c.h.Wait()
	if err != nil || st != (claudeproc.ExitStatus{Code: 3}) {
		t.Errorf("Wait = %+v, %v; want code 3", st, err)
	}
	if out := recv(t, c.stdout, "stdout"); out != "line one\nline two\n" {
		t.Errorf("stdout = %q", out)
	}
	if e := recv(t, c.stderr, "stderr"); e != "to stderr\n" {
		t.Errorf("stderr = %q", e)
	}
	if left := r.containers(t, sess.Thread, true); len(left) != 0 {
		t.Errorf("container not removed after Wait: %v", left)
	}
}

// TestRunnerSignals: a signal reaches the CLI through the container's init
// and comes back as the signal that ended it; after Wait, Signal does
// nothing.
func TestRunnerSignals(t *testing.T) {
	r := testRunner(t, nil)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			sess := claudeproc.Session{Channel: "test/signals", Thread: "test/signals/" + strconv.Itoa(int(sig))}
			c, err := startRaw(t, r, t.TempDir(), nil, sess, "/bin/sh", "-c", `echo up; exec sleep 600`)
			if err != nil {
				t.Fatal(err)
			}
			defer c.stdin.Close()
			ids := r.containers(t, sess.Thread, false)
			if len(ids) != 1 {
				t.Fatal("no running container")
			}
			// Signal once the shell has said "up" and become sleep (the
			// engine's process table): a signal before the echo would
			// leave nothing on stdout.
			for deadline := time.Now().Add(eventTimeout); ; time.Sleep(50 * time.Millisecond) {
				out, _ := exec.Command("docker", "top", ids[0]).CombinedOutput()
				if slices.ContainsFunc(strings.Split(string(out), "\n"), func(l string) bool {
					return strings.HasSuffix(l, " sleep 600") && !strings.Contains(l, "exec")
				}) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the container's shell never became sleep: %s", out)
				}
			}
			if err := c.h.Signal(sig); err != nil {
				t.Fatal(err)
			}
			st, err := c.h.Wait()
			if err != nil || st != (claudeproc.ExitStatus{Code: -1, Signal: sig}) {
				t.Errorf("Wait = %+v, %v; want killed by %v", st, err, sig)
			}
			if out := recv(t, c.stdout, "stdout"); out != "up\n" {
				t.Errorf("stdout = %q", out)
			}
			if err := c.h.Signal(syscall.SIGKILL); err != nil {
				t.Errorf("Signal after Wait: %v", err)
			}
			if left := r.containers(t, sess.Thread, true); len(left) != 0 {
				t.Errorf("container not removed: %v", left)
			}
		})
	}
}

// TestRunnerStartFails: an image the engine does not have fails Start,
// and the runner has closed the pipe ends it was given; a CLI that is not
// in the image ends at once (the container's init cannot run it) and says
// so on stderr. Neither leaves a container.
func TestRunnerStartFails(t *testing.T) {
	r := testRunner(t, nil)
	sess := claudeproc.Session{Channel: "test/fail", Thread: "test/fail/1"}
	t.Run("no image", func(t *testing.T) {
		cfg := r.cfg
		cfg.Image = "claudeops-test-no-such-image:0"
		noImage, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer noImage.Close()
		c, err := startRaw(t, noImage, t.TempDir(), nil, sess, "claude")
		if err == nil {
			c.h.Wait()
			t.Fatal("Start succeeded")
		}
		// EOF on both: the runner closed the write ends it owned.
		recv(t, c.stdout, "stdout")
		recv(t, c.stderr, "stderr")
	})
	t.Run("no CLI", func(t *testing.T) {
		c, err := startRaw(t, r, t.TempDir(), nil, sess, "/no/such/claude")
		if err != nil {
			t.Fatal(err)
		}
		c.stdin.Close()
		if st, err := c.h.Wait(); err != nil || st.Code != 127 {
			t.Errorf("Wait = %+v, %v; want code 127", st, err)
		}
		if e := recv(t, c.stderr, "stderr"); !strings.Contains(e, "/no/such/claude") {
			t.Errorf("stderr does not name the CLI: %q", e)
		}
	})
	t.Run("no working directory", func(t *testing.T) {
		if _, err := r.Start(context.Background(), claudeproc.Spec{Bin: "claude", Session: sess}); err == nil {
			t.Error("Start without a working directory succeeded")
		}
	})
	if left := r.containers(t, "", true); len(left) != 0 {
		t.Errorf("containers left: %v", left)
	}
}

// TestBotGone: when the bot dies, its end of the attach stream goes with
// it. A CLI then reads EOF, exits, and its container removes itself; one
// that outlives the bot anyway is removed by the next Prepare.
func TestBotGone(t *testing.T) {
	r := testRunner(t, nil)
	for _, tc := range []struct {
		name, script string
		prepare      bool
	}{
		{"the CLI exits", `cat`, false},
		{"a container outlives the bot", `cat; exec sleep 600`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := claudeproc.Session{Channel: "test/gone", Thread: "test/gone/" + tc.name}
			c, err := startRaw(t, r, t.TempDir(), nil, sess, "/bin/sh", "-c", tc.script)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				c.stdin.Close()
				_ = c.h.Signal(syscall.SIGKILL) // if it is still there
				c.h.Wait()
			}()
			c.h.(*handle).att.Close() // what the kernel does to a dead bot's socket
			if tc.prepare {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if live := r.containers(t, sess.Thread, false); len(live) != 1 {
					t.Fatalf("running containers of the thread: %v", live)
				}
				if err := r.Prepare(ctx); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			for len(r.containers(t, sess.Thread, true)) > 0 {
				if time.Now().After(deadline) {
					t.Fatal("the container is still there 30 s after the bot went")
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// TestPrepareRemovesChannelVolumes: the per-channel volumes an earlier
// version made (no thread label), which every thread of a channel shared,
// are removed at start; this instance's per-thread volumes stay, and so do
// another instance's volumes of either kind.
func TestPrepareRemovesChannelVolumes(t *testing.T) {
	r := testRunner(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	other := "other-" + randomHex(4)
	vols := []struct {
		instance, name string
		thread, stays  bool
	}{
		{r.cfg.Instance, "old-channel", false, false},
		{r.cfg.Instance, "thread", true, true},
		{other, "old-channel", false, true},
	}
	for _, v := range vols {
		labels := map[string]string{LabelInstance: v.instance, LabelChannel: Hash("c")}
		if v.thread {
			labels[LabelThread] = Hash("c/1")
		}
		name := "claudeops-" + v.instance + "-" + v.name
		if _, err := r.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Labels: labels}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = r.cli.VolumeRemove(context.Background(), name, client.VolumeRemoveOptions{}) })
	}
	if err := r.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	for _, v := range vols {
		name := "claudeops-" + v.instance + "-" + v.name
		_, err := r.cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{})
		if stays := err == nil; stays != v.stays {
			t.Errorf("volume %s still there: %v, want %v (%v)", name, stays, v.stays, err)
		}
	}
}

// TestCLIVersion: the CLI's version is read from the image, not the host
// (whose PATH has no claude here; the image holds a supported CLI); a CLI
// the image lacks is an error, and neither leaves a container.
func TestCLIVersion(t *testing.T) {
	r := testRunner(t, func(c *Config) { c.User = "4242:4242" })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t.Setenv("PATH", t.TempDir())
	raw, err := r.CLIVersion(ctx, "claude")
	if err != nil || !strings.HasSuffix(raw, " (Claude Code)") {
		t.Fatalf("CLIVersion = %q, %v; want what claude --version prints", raw, err)
	}
	if v, err := claudeproc.ParseVersion(raw); err != nil || claudeproc.Classify(v) == claudeproc.CompatIncompatible {
		t.Errorf("CLIVersion = %q (%v): the image's CLI is older than the minimum %s", raw, err, claudeproc.MinVersion)
	}
	if v, err := r.CLIVersion(ctx, "/no/such/claude"); err == nil || !strings.Contains(err.Error(), "/no/such/claude") {
		t.Errorf("CLIVersion of a missing CLI = %q, %v", v, err)
	}
}

// TestRunnerEnvAsGiven is the control of the secret checks below: the
// runner hands the container the environment it is given (so a secret
// there would show in `env`, which is what the session test reads), with
// the host's paths replaced by the container's.
func TestRunnerEnvAsGiven(t *testing.T) {
	r := testRunner(t, nil)
	env := []string{"SLACK_BOT_TOKEN=xoxb-canary-control", "PATH=/bot/only/bin", "HOME=/bot/home", "SHELL=/bin/zsh"}
	c, err := startRaw(t, r, t.TempDir(), env, claudeproc.Session{Channel: "test/env", Thread: "test/env/1"}, "env")
	if err != nil {
		t.Fatal(err)
	}
	c.stdin.Close()
	if _, err := c.h.Wait(); err != nil {
		t.Fatal(err)
	}
	out := recv(t, c.stdout, "stdout")
	for _, want := range []string{"SLACK_BOT_TOKEN=xoxb-canary-control\n", "HOME=/home/claude\n", "PATH=/usr/local/sbin:/usr/local/bin:"} {
		if !strings.Contains(out, want) {
			t.Errorf("env in the container lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"/bot/only/bin", "/bot/home", "SHELL="} {
		if strings.Contains(out, bad) {
			t.Errorf("env in the container has %q:\n%s", bad, out)
		}
	}
}
