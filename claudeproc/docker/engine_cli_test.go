package docker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// --- the real CLI in containers, through claudeproc.Start -----------------

// events records a process's events and lets a test wait for one.
type events struct {
	t      *testing.T
	mu     sync.Mutex
	list   []claudeproc.Event
	notify chan struct{}
	done   chan struct{}
}

func record(t *testing.T, p *claudeproc.Process) *events {
	e := &events{t: t, notify: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(e.done)
		for ev := range p.Events() {
			e.mu.Lock()
			e.list = append(e.list, ev)
			e.mu.Unlock()
			select {
			case e.notify <- struct{}{}:
			default:
			}
		}
	}()
	return e
}

func (e *events) waitFor(what string, pred func(claudeproc.Event) bool) claudeproc.Event {
	e.t.Helper()
	deadline := time.NewTimer(eventTimeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		for _, ev := range e.list {
			if pred(ev) {
				e.mu.Unlock()
				return ev
			}
		}
		e.mu.Unlock()
		select {
		case <-e.notify:
		case <-e.done:
			e.mu.Lock()
			n := len(e.list)
			e.mu.Unlock()
			// One last look: the final events may have come with done.
			for _, ev := range e.list[:n] {
				if pred(ev) {
					return ev
				}
			}
			e.t.Fatalf("process ended while waiting for %s: %s", what, e.kinds())
		case <-deadline.C:
			e.t.Fatalf("timed out waiting for %s: %s", what, e.kinds())
		}
	}
}

func (e *events) kinds() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.list {
		b.WriteString(ev.Kind() + " ")
		if x, ok := ev.(*claudeproc.Exited); ok {
			b.WriteString(x.Info.Reason + " stderr: " + x.Info.StderrTail)
		}
	}
	return b.String()
}

func isResult(ev claudeproc.Event) bool { _, ok := ev.(*claudeproc.Result); return ok }

func isCanUseTool(ev claudeproc.Event) bool {
	c, ok := ev.(*claudeproc.ControlRequest)
	return ok && c.CanUseTool != nil
}

// botEnv is the bot's own environment as a test stands it in: what the CLI
// needs, and the secrets and host paths that must not reach the container.
func botEnv(api *fakeanthropic.Server) []string { return botEnvAt(api.URL) }

// botEnvAt is botEnv for the model API at url.
func botEnvAt(url string) []string {
	parent := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=/root/bot-home-on-host",
		"TMPDIR=/bot-tmp-on-host",
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + url,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
		"SLACK_BOT_TOKEN=xoxb-canary",
		"SLACK_APP_TOKEN=xapp-canary",
		"MATRIX_ACCESS_TOKEN=syt-canary",
		"CLAUDEOPS_DB=/srv/canary/claudeops.db",
		"DOCKER_HOST=unix:///var/run/docker.sock",
	}
	return claudeproc.BuildEnv(parent, nil)
}

type session struct {
	p  *claudeproc.Process
	ev *events
}

func startSession(t *testing.T, r *Runner, api *fakeanthropic.Server, dir string, sess claudeproc.Session, resume string) *session {
	t.Helper()
	p, err := claudeproc.Start(context.Background(), claudeproc.Options{
		Bin: "claude", // the image's: no such CLI on the host's PATH
		Dir: dir, Env: botEnv(api), Runner: r, Session: sess, Resume: resume,
		StopGrace: 10 * time.Second, RequestTimeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatalf("start session: %v", err)
	}
	s := &session{p: p, ev: record(t, p)}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		p.Close(ctx)
		<-s.ev.done
	})
	return s
}

// probe is what the Bash tool runs in the container: it writes what the
// host then reads as the oracle.
const probe = `echo made in a container > made.txt
env > env.txt
tr '\0' ' ' < /proc/1/cmdline > pid1.txt
for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f"; echo; done > cmdlines.txt
cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' > environs.txt
ls -l /var/run/docker.sock /run/docker.sock > sock.txt 2>&1
cat SECRET > stolen.txt 2>&1
cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes > memory.txt 2>/dev/null
cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max > pids.txt 2>/dev/null
echo probed`

// TestSessionInContainer: one turn of the real CLI in a container, with a
// Bash call that writes in the working directory (seen from the host) and
// records what the container can see. The bot's secrets (in the parent
// environment the bot builds the CLI's from) must not be in any process's
// environment there, the bot's processes and its other files must not be
// visible, nor the Docker socket; the limits hold, in the engine's record
// and in the kernel's cgroup files; the container is gone after Close.
func TestSessionInContainer(t *testing.T) {
	const memory, pids = 768 << 20, 200
	r := testRunner(t, func(c *Config) { c.Memory, c.CPUs, c.Pids = memory, 1.5, pids })
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	secret := filepath.Join(base, "claudeops.db") // the bot's state, beside the working tree
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("bot-state-canary"), 0o644); err != nil {
		t.Fatal(err)
	}
	command := strings.ReplaceAll(probe, "SECRET", secret)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("tool said: " + trs[0].Content)}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": command, "description": "probe"})}}
	})
	sess := claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1700000000.000100"}
	s := startSession(t, r, api, dir, sess, "")
	if err := s.p.SendText("probe the container"); err != nil {
		t.Fatal(err)
	}
	req := s.ev.waitFor("can_use_tool", isCanUseTool).(*claudeproc.ControlRequest)
	// The container as the engine has it, while the session runs.
	live := r.containers(t, sess.Thread, false)
	if len(live) != 1 {
		t.Fatalf("running containers of the thread: %v", live)
	}
	checkInspect(t, r, live[0], dir, sess, memory, pids)

	if err := s.p.Allow(req.RequestID, nil, nil); err != nil {
		t.Fatal(err)
	}
	res := s.ev.waitFor("result", isResult).(*claudeproc.Result)
	if res.IsError || !strings.Contains(res.Result, "probed") {
		t.Fatalf("result = %+v", res)
	}
	checkProbe(t, dir, api.URL, memory, pids)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if info := s.p.Close(ctx); info.Code != 0 || info.Signal != "" {
		t.Errorf("exit = %+v", info)
	}
	if left := r.containers(t, sess.Thread, true); len(left) != 0 {
		t.Errorf("container still there after Close: %v", left)
	}
}

func checkInspect(t *testing.T, r *Runner, id, dir string, sess claudeproc.Session, memory, pids int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := r.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Container
	hc := c.HostConfig
	if hc.Memory != memory || hc.MemorySwap != memory || hc.NanoCPUs != 1.5e9 || hc.PidsLimit == nil || *hc.PidsLimit != pids {
		t.Errorf("limits: memory %d swap %d nanocpus %d pids %v", hc.Memory, hc.MemorySwap, hc.NanoCPUs, hc.PidsLimit)
	}
	if hc.Privileged || len(hc.CapAdd) != 0 || len(hc.CapDrop) != 1 || hc.CapDrop[0] != "ALL" ||
		len(hc.SecurityOpt) != 1 || hc.SecurityOpt[0] != "no-new-privileges" {
		t.Errorf("privileges: privileged %v add %v drop %v secopt %v", hc.Privileged, hc.CapAdd, hc.CapDrop, hc.SecurityOpt)
	}
	if !hc.AutoRemove || hc.Init == nil || !*hc.Init || hc.LogConfig.Type != "none" || hc.NetworkMode != "host" {
		t.Errorf("autoremove %v init %v log %q network %q", hc.AutoRemove, hc.Init, hc.LogConfig.Type, hc.NetworkMode)
	}
	if want := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid()); c.Config.User != want {
		t.Errorf("user %q, want the bot's %q", c.Config.User, want)
	}
	// Without operator MCP servers, no launcher comes between.
	if len(c.Config.Entrypoint) != 1 || c.Config.Entrypoint[0] != "claude" {
		t.Errorf("entrypoint %q, want the CLI's own", c.Config.Entrypoint)
	}
	if c.Config.Labels[LabelChannel] != Hash(sess.Channel) || c.Config.Labels[LabelThread] != Hash(sess.Thread) {
		t.Errorf("labels %v", c.Config.Labels)
	}
	// What is mounted: the working tree at its own path and the thread's
	// volume, nothing else of the host.
	var mounts []string
	for _, m := range c.Mounts {
		mounts = append(mounts, string(m.Type)+" "+m.Name+" "+m.Source+" -> "+m.Destination)
		switch {
		case m.Type == "bind" && m.Source == dir && m.Destination == dir && m.RW:
		case m.Type == "volume" && m.Name == r.VolumeName(sess) && m.Destination == Home+"/.claude":
		default:
			t.Errorf("unexpected mount %s", mounts[len(mounts)-1])
		}
	}
	if len(mounts) != 2 {
		t.Errorf("mounts: %q", mounts)
	}
}

func checkProbe(t *testing.T, dir, apiURL string, memory, pids int64) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("the probe's %s: %v", name, err)
		}
		return string(b)
	}
	// Written through the bind mount, as the bot's user.
	fi, err := os.Stat(filepath.Join(dir, "made.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
		t.Errorf("made.txt owned by %d:%d", st.Uid, st.Gid)
	}
	env, environs := read("env.txt"), read("environs.txt")
	// Controls: the oracles see the environment the CLI was given.
	for _, want := range []string{"ANTHROPIC_BASE_URL=" + apiURL + "\n", "HOME=/home/claude\n", "CLAUDE_CONFIG_DIR=/home/claude/.claude\n"} {
		if !strings.Contains(env, want) || !strings.Contains(environs, want) {
			t.Errorf("the container's environment lacks %q:\nenv:\n%s", want, env)
		}
	}
	for _, text := range []string{env, environs} {
		for _, line := range strings.Split(text, "\n") {
			for _, bad := range []string{"SLACK_", "MATRIX_", "CLAUDEOPS_", "DOCKER_", "/root/bot-home-on-host", "/bot-tmp-on-host"} {
				if strings.Contains(line, bad) {
					t.Errorf("the bot's environment reached the container: %q", line)
				}
			}
			if strings.Contains(line, "canary") {
				t.Errorf("a secret reached the container: %q", line)
			}
		}
	}
	// The bot (this test binary) is nowhere among the container's
	// processes; its pid 1 is the container's init running the CLI.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pid1, cmdlines := read("pid1.txt"), read("cmdlines.txt")
	if !strings.Contains(pid1, "claude -p --output-format stream-json") {
		t.Errorf("pid 1 is %q, not the container's init running the CLI", pid1)
	}
	if strings.Contains(cmdlines, filepath.Base(self)) || strings.Count(cmdlines, "\n") > 20 {
		t.Errorf("the container sees processes beyond its own:\n%s", cmdlines)
	}
	if s := read("sock.txt"); !strings.Contains(s, "No such file") || strings.Contains(s, "srw") {
		t.Errorf("the Docker socket is in the container: %s", s)
	}
	if s := read("stolen.txt"); strings.Contains(s, "canary") || !strings.Contains(s, "No such file") {
		t.Errorf("the bot's state file is readable in the container: %s", s)
	}
	if s := strings.TrimSpace(read("memory.txt")); s != strconv.FormatInt(memory, 10) {
		t.Errorf("the kernel's memory limit is %q, want %d", s, memory)
	}
	if s := strings.TrimSpace(read("pids.txt")); s != strconv.FormatInt(pids, 10) {
		t.Errorf("the kernel's pids limit is %q, want %d", s, pids)
	}
}

// TestResumeAcrossContainers: the CLI's state outlives its container on the
// thread's volume, so a later container of the same thread resumes the
// session; one of another thread of the same channel cannot (the control:
// it is the volume that carries the state), nor the thread itself once its
// volume is removed (RemoveHome, as on `new`). It runs as an unprivileged
// user, as a bot not run by root would: the new volume is made that user's.
func TestResumeAcrossContainers(t *testing.T) {
	const uid, gid = 4242, 4343
	r := testRunner(t, func(c *Config) { c.User = strconv.Itoa(uid) + ":" + strconv.Itoa(gid) })
	dir := t.TempDir()
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Skipf("chown the working directory to %d:%d: %v", uid, gid, err)
	}
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.Contains(req.LastUserText(), "which bird") {
			if strings.Contains(req.Transcript(), "remember: pelican") {
				return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("it was the pelican")}}
			}
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("no idea")}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted")}}
	})
	const ch = "matrix/!room:example.org"
	a := claudeproc.Session{Channel: ch, Thread: ch + "/$ev1"}
	b := claudeproc.Session{Channel: ch, Thread: ch + "/$ev3"}

	first := startSession(t, r, api, dir, a, "")
	if err := first.p.SendText("remember: pelican"); err != nil {
		t.Fatal(err)
	}
	sid := first.ev.waitFor("first result", isResult).(*claudeproc.Result).SessionID
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if info := first.p.Close(ctx); info.Code != 0 {
		t.Fatalf("first container: %+v", info)
	}
	if left := r.containers(t, a.Thread, true); len(left) != 0 {
		t.Fatalf("first container still there: %v", left)
	}
	vol, err := r.cli.VolumeInspect(ctx, r.VolumeName(a), client.VolumeInspectOptions{})
	if err != nil || vol.Volume.Labels[LabelThread] != Hash(a.Thread) || vol.Volume.Labels[LabelChannel] != Hash(ch) {
		t.Errorf("thread A's volume %s: %v %v", r.VolumeName(a), vol.Volume.Labels, err)
	}

	if !resumed(t, r, api, dir, a, sid) {
		t.Errorf("thread A's next container did not resume its session")
	}
	if resumed(t, r, api, dir, b, sid) {
		t.Errorf("another thread of the channel resumed thread A's session")
	}
	if err := r.RemoveHome(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cli.VolumeInspect(ctx, r.VolumeName(a), client.VolumeInspectOptions{}); err == nil {
		t.Errorf("thread A's volume is still there after RemoveHome")
	}
	if resumed(t, r, api, dir, a, sid) {
		t.Errorf("thread A resumed its session after its volume was removed")
	}
}

// resumed starts a container of s resuming sid, asks for the bird, and
// reports whether the model was sent the earlier turn.
func resumed(t *testing.T, r *Runner, api *fakeanthropic.Server, dir string, s claudeproc.Session, sid string) bool {
	t.Helper()
	ses := startSession(t, r, api, dir, s, sid)
	if err := ses.p.SendText("which bird?"); err != nil && !errors.Is(err, claudeproc.ErrExited) {
		t.Fatal(err)
	}
	ev := ses.ev.waitFor("the end of a resume", func(ev claudeproc.Event) bool {
		_, exited := ev.(*claudeproc.Exited)
		return exited || isResult(ev)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ses.p.Close(ctx)
	res, ok := ev.(*claudeproc.Result)
	t.Logf("%s resuming %s: %+v", s.Thread, sid, ev)
	return ok && !res.IsError && res.Result == "it was the pelican" && res.SessionID == sid
}

// TestKillMidTurn: killing a session while the model is still answering
// ends its container, which is then removed.
func TestKillMidTurn(t *testing.T) {
	r := testRunner(t, nil)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("a long answer that will not finish")}, Hold: hold, ChunkSize: 5}
	})
	sess := claudeproc.Session{Channel: "console/ops", Thread: "console/ops/1"}
	s := startSession(t, r, api, t.TempDir(), sess, "")
	if err := s.p.SendText("talk slowly"); err != nil {
		t.Fatal(err)
	}
	s.ev.waitFor("first text delta", func(ev claudeproc.Event) bool {
		se, ok := ev.(*claudeproc.StreamEvent)
		return ok && se.DeltaType == "text_delta"
	})
	if live := r.containers(t, sess.Thread, false); len(live) != 1 {
		t.Fatalf("running containers of the thread: %v", live)
	}
	s.p.Kill()
	if info := s.p.ExitInfo(); info.Signal != "SIGKILL" {
		t.Errorf("exit = %+v, want killed by SIGKILL", info)
	}
	ex := s.ev.waitFor("exited", func(ev claudeproc.Event) bool { _, ok := ev.(*claudeproc.Exited); return ok }).(*claudeproc.Exited)
	if !ex.MidTurn {
		t.Error("not reported mid-turn")
	}
	if left := r.containers(t, sess.Thread, true); len(left) != 0 {
		t.Errorf("container still there after Kill: %v", left)
	}
}
