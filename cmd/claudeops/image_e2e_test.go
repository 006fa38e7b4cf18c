package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestImage builds the Dockerfile and runs the image on a real engine as an
// operator would: `claudeops console` with /data on a named volume,
// against the fake model API on the host's loopback. /readyz answers JSON,
// a prompt gets the model's answer, the image's HEALTHCHECK finds the bot
// healthy, no process of the container runs as root, there is no Node,
// and SIGTERM (through tini) ends it cleanly. Then the container is
// recreated on the same volume: the thread resumes with its context, which
// the model API, an oracle outside our code, sees in the second turn's
// request (with HOME off the volume, this fails).
//
// The runner is the default's. The two containers are given the two
// security options docs/DEPLOYMENT.md names: the bot chooses the sandbox
// (/readyz) and the CLI runs under bubblewrap (the engine's process
// table: its parent is bwrap). A third, under the engine's defaults,
// where bubblewrap cannot make namespaces, says it runs sessions locally.
// (Each runner keeps its own CLI homes, so a thread does not resume across
// a change of runner: the resume is checked within one.)
func TestImage(t *testing.T) {
	buildBase, runtimeBase := imageBases(t)
	start := time.Now()
	image := buildImage(t, buildBase, runtimeBase)
	t.Logf("image built in %s", time.Since(start).Round(time.Second))

	api := fakeanthropic.Start(t, echoScript)
	volume := randomName(t, "claudeops-image-test-")
	cleanupDocker(t, "volume", "rm", volume) // after the containers (cleanups run last first)
	word := randomName(t, "pelican-")

	first := runImage(t, image, volume, api.URL, sandboxOptions...)
	first.waitReady(t)
	first.checkRunner(t, "sandbox", "the default: bubblewrap works")
	first.say("note the word " + word)
	first.expect(`^\[main\] claude: ok: note the word ` + word + `$`)
	first.waitHealthy(t)
	first.checkNotRoot(t)
	first.checkNoNode(t)
	first.checkSandboxed(t)
	first.stop(t)

	second := runImage(t, image, volume, api.URL, sandboxOptions...)
	second.waitReady(t)
	second.say("which word was it?")
	second.expect(`^\[main\] claude: ok: which word was it\?$`)
	var turn *fakeanthropic.Request
	for _, r := range api.Requests() {
		if r.LastUserText() == "which word was it?" {
			turn = r
		}
	}
	if turn == nil {
		t.Fatal("the model API got no request for the second turn")
	}
	if tr := turn.Transcript(); !strings.Contains(tr, "note the word "+word) {
		t.Errorf("the recreated container's turn went to the model without the first turn (no resume); "+
			"its transcript ends:\n%s", tr[max(0, len(tr)-2000):])
	}
	second.stop(t)

	third := runImage(t, image, volume, api.URL)
	third.waitReady(t)
	third.checkRunner(t, "local", "bubblewrap")
	third.stop(t)
	t.Logf("image test done in %s", time.Since(start).Round(time.Second))
}

// imageRun is `docker run -i <image> console`: the bot in a container of
// its own, its console on the docker client's stdin and stdout.
type imageRun struct {
	*botProc
	name string
	addr string // CLAUDEOPS_HTTP_ADDR, on the host's loopback
}

// sandboxOptions let the container make the user namespaces bubblewrap
// needs (Docker's default seccomp profile refuses them to a process
// without CAP_SYS_ADMIN) and mount a /proc of its own (the engine's masked
// /proc paths forbid that otherwise). docs/DEPLOYMENT.md gives the same.
var sandboxOptions = []string{"--security-opt", "seccomp=unconfined", "--security-opt", "systempaths=unconfined"}

// runImage starts a container of image with volume at /data, on the
// host's network (the fake model API listens on its loopback), with the
// engine's options opts; it is removed at the test's end.
func runImage(t *testing.T, image, volume, apiURL string, opts ...string) *imageRun {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String() // a free port, for the bot to listen on
	ln.Close()
	name := randomName(t, "claudeops-image-test-")
	cleanupDocker(t, "rm", "--force", "--volumes", name)
	args := append([]string{"run", "--interactive", "--name", name, "--network", "host",
		"--volume", volume + ":/data", "--health-interval", "1s",
		"--env", "CLAUDEOPS_HTTP_ADDR=" + addr,
		"--env", "ANTHROPIC_BASE_URL=" + apiURL, "--env", "ANTHROPIC_API_KEY=sk-test",
		"--env", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "--env", "DISABLE_TELEMETRY=1"},
		opts...)
	cmd := exec.Command("docker", append(args, image, "console")...)
	return &imageRun{botProc: startProc(t, cmd), name: name, addr: addr}
}

// startProc is startBotProc for any command: its stdout read as lines, its
// stderr as the bot's log.
func startProc(t *testing.T, cmd *exec.Cmd) *botProc {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &botProc{t: t, cmd: cmd, stdin: in, notify: make(chan struct{}, 1), done: make(chan struct{})}
	cmd.Stderr = &testLog{t: t, bot: b}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			b.mu.Lock()
			b.lines = append(b.lines, sc.Text())
			b.mu.Unlock()
			select {
			case b.notify <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // for the image test the client only; the container goes with cleanupDocker
		<-b.done
		_ = cmd.Wait()
	})
	return b
}

// waitReady waits for /readyz to say ready. Every answer must keep its
// contract: a JSON object whose "ready" is a boolean, 200 when true and
// 503 when false.
func (r *imageRun) waitReady(t *testing.T) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for last := "no answer"; ; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not say ready within 90 s; last: %s; log:\n%s", last, strings.Join(r.logLines(), "\n"))
		}
		resp, err := c.Get("http://" + r.addr + "/readyz")
		if err != nil {
			last = err.Error() // not listening yet
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read /readyz: %v", err)
		}
		var doc struct {
			Ready *bool `json:"ready"`
		}
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if err := json.Unmarshal(body, &doc); err != nil || doc.Ready == nil || ct != "application/json" {
			t.Fatalf("/readyz answered %d %q (Content-Type %q): want a JSON object with a boolean \"ready\"", resp.StatusCode, body, ct)
		}
		if want := map[bool]int{true: http.StatusOK, false: http.StatusServiceUnavailable}[*doc.Ready]; resp.StatusCode != want {
			t.Fatalf("/readyz answered %d with ready=%v, want %d: %s", resp.StatusCode, *doc.Ready, want, body)
		}
		if *doc.Ready {
			return
		}
		last = string(body)
	}
}

// waitHealthy waits for the engine to find the container healthy by the
// image's own HEALTHCHECK (run every second here), and checks that the
// check asked the bot's /healthz.
func (r *imageRun) waitHealthy(t *testing.T) {
	t.Helper()
	var health struct {
		Status string
		Log    []struct {
			ExitCode int
			Output   string
		}
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		out := mustDocker(t, "inspect", "--format", "{{json .State.Health}}", r.name)
		if err := json.Unmarshal([]byte(out), &health); err != nil {
			t.Fatalf("docker inspect: health %q: %v (has the image no HEALTHCHECK?)", out, err)
		}
		if health.Status == "healthy" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container is %q after 90 s: %+v", health.Status, health.Log)
		}
	}
	last := health.Log[len(health.Log)-1]
	if want := "GET http://" + r.addr + "/healthz: 200 OK"; last.ExitCode != 0 || !strings.Contains(last.Output, want) {
		t.Errorf("the healthcheck's last run: exit %d, output %q; want 0 and %q", last.ExitCode, last.Output, want)
	}
}

// checkNotRoot: every process of the container, the bot and the CLI it
// started among them, runs with no root id (as the host's ps sees them).
func (r *imageRun) checkNotRoot(t *testing.T) {
	t.Helper()
	out := mustDocker(t, "top", r.name, "-eo", "pid,ruid,euid,suid,fsuid,comm")
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 6 {
			t.Fatalf("docker top: %q", line)
		}
		seen[f[5]] = true
		for _, id := range f[1:5] {
			if n, err := strconv.Atoi(id); err != nil || n == 0 {
				t.Errorf("a process of the container runs as root (pid, ruid, euid, suid, fsuid, command): %s", line)
				break
			}
		}
	}
	for _, want := range []string{"tini", "claudeops", "claude"} {
		if !seen[want] {
			t.Errorf("docker top lists no %s: %v\n%s", want, seen, out)
		}
	}
}

// checkRunner: /readyz names the runner the bot chose and why.
func (r *imageRun) checkRunner(t *testing.T, name, why string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + r.addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Runner struct{ Name, Why string } `json:"runner"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	if doc.Runner.Name != name || !strings.Contains(doc.Runner.Why, why) {
		t.Errorf("/readyz runner %+v, want %q with a why saying %q", doc.Runner, name, why)
	}
}

// checkSandboxed: the engine's process table (an oracle outside the bot)
// shows the CLI's parent to be bubblewrap.
func (r *imageRun) checkSandboxed(t *testing.T) {
	t.Helper()
	out := mustDocker(t, "top", r.name, "-eo", "pid,ppid,comm")
	comm := map[string]string{}
	var parents []string
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("docker top: %q", line)
		}
		comm[f[0]] = f[2]
		if f[2] == "claude" {
			parents = append(parents, f[1])
		}
	}
	if len(parents) == 0 {
		t.Fatalf("docker top lists no claude:\n%s", out)
	}
	for _, pp := range parents {
		if comm[pp] != "bwrap" {
			t.Errorf("a claude's parent is %q (pid %s), want bwrap:\n%s", comm[pp], pp, out)
		}
	}
}

// checkNoNode: the CLI in the image is its native build; there is no
// Node to run it with.
func (r *imageRun) checkNoNode(t *testing.T) {
	t.Helper()
	out := mustDocker(t, "exec", r.name, "sh", "-c", "for p in node nodejs npm; do command -v $p; done; echo end")
	if out != "end" {
		t.Errorf("Node in the image: %q", out)
	}
}

// stop stops the container as the engine does (SIGTERM to tini, which
// passes it on), expects the bot's clean exit, and removes the container,
// leaving the volume.
func (r *imageRun) stop(t *testing.T) {
	t.Helper()
	mustDocker(t, "stop", "--time", "60", r.name)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatal("docker run did not return after the container stopped")
	}
	if code := mustDocker(t, "inspect", "--format", "{{.State.ExitCode}}", r.name); code != fmt.Sprint(exitOK) {
		t.Errorf("the container exited with %s after SIGTERM, want %d; log:\n%s", code, exitOK, strings.Join(r.logLines(), "\n"))
	}
	mustDocker(t, "rm", r.name)
}
