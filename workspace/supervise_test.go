package workspace

// Every git the bot runs dies with the bot. The bot here is the test
// binary re-executed (fakeBotEnv): it opens a Manager on the test's
// workspaces directory and clones or pushes through a slow transport, an
// ssh:// remote whose GIT_SSH is a script that sleeps around the real
// git-upload-pack or git-receive-pack. The test kills it with SIGKILL.
// The oracles are outside our code: /proc (which processes carry the git
// environment's HOME, the workspaces' home/), the temporary directory on
// disk, and the bare remote's refs read with the real git.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testkit"
)

// fakeBotEnv holds the fake bot's orders (fakeBotOrders, as JSON).
const fakeBotEnv = "WORKSPACE_FAKE_BOT"

// fakeBotOrders is what the fake bot does.
type fakeBotOrders struct {
	Dir          string   // the workspaces directory
	Op           string   // "check" (a clone) or "push"
	Repo         string   // for check
	Worktree     Worktree // for push
	Owner        string   // for push
	Unsupervised bool     // the control: git run as before its supervision
}

// TestFakeGitBot is the fake bot when fakeBotEnv is set, and nothing else.
func TestFakeGitBot(t *testing.T) {
	raw := os.Getenv(fakeBotEnv)
	if raw == "" {
		t.Skip("the fake bot of the supervision tests")
	}
	var o fakeBotOrders
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Dir: o.Dir})
	if err != nil {
		t.Fatal(err)
	}
	m.unsupervised = o.Unsupervised
	fmt.Println("ready")
	ctx := testCtx(t)
	switch o.Op {
	case "check":
		_, err = m.Check(ctx, o.Repo)
	case "push":
		err = m.Push(ctx, o.Worktree, o.Owner)
	}
	fmt.Println("done", err)
}

// slowRemote is a bare remote reached through testkit's slow transport.
type slowRemote struct {
	*remote
	*testkit.SlowRemote
	url string
}

func newSlowRemote(t *testing.T) *slowRemote {
	t.Helper()
	r := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	s := testkit.NewSlowRemote(t, r.dir)
	return &slowRemote{remote: r, SlowRemote: s, url: s.URL}
}

// fakeBot is a started fake bot.
type fakeBot struct {
	cmd  *exec.Cmd
	out  *testkit.Output
	dead bool
}

func startFakeBot(t *testing.T, rem *slowRemote, o fakeBotOrders) *fakeBot {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeGitBot$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fakeBotEnv+"="+string(raw))
	cmd.Env = append(cmd.Env, rem.Env()...)
	b := &fakeBot{cmd: cmd, out: testkit.NewOutput()}
	cmd.Stdout, cmd.Stderr = b.out, b.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.kill(t) })
	b.out.WaitMatch(t, 20*time.Second, `(?m)^ready$`)
	return b
}

// kill kills the fake bot with SIGKILL, as an operator's bad day would.
func (b *fakeBot) kill(t *testing.T) {
	t.Helper()
	if b.dead {
		return
	}
	b.dead = true
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	_ = b.cmd.Wait()
}

// gitsOf lists the processes whose environment holds the git environment's
// HOME of the workspaces directory dir: every git the Manager starts, and
// what they start (the ssh script, its sleep).
func gitsOf(dir string) []int {
	want := []byte("HOME=" + filepath.Join(dir, "home") + "\x00")
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && slices.Contains(strings.SplitAfter(string(env), "\x00"), string(want)) && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) == 0 || f[0] == "Z"
}

func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		fmt.Fprintf(&b, "\n  %d: %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return b.String()
}

// killPids ends what a control left running.
func killPids(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// tempEntries lists the workspaces' temporary directory.
func tempEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// A bot killed during a clone leaves no git running, and its temporary
// clone is removed at the next start; the control shows the orphaned fetch
// that went on without the supervision.
func TestKilledBotCloneLeavesNoGit(t *testing.T) {
	for _, tc := range []struct {
		name         string
		unsupervised bool
	}{
		{"supervised: git dies with the bot", false},
		{"control: unsupervised, the fetch outlives the bot", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rem := newSlowRemote(t)
			dir := filepath.Join(t.TempDir(), "workspaces")
			rem.Set(t, "upload", "before 30")
			bot := startFakeBot(t, rem, fakeBotOrders{Dir: dir, Op: "check", Repo: rem.url, Unsupervised: tc.unsupervised})
			testkit.WaitFor(t, 20*time.Second, "the clone's fetch to reach the slow transport", func() bool { return rem.Started("upload") })
			running := gitsOf(dir)
			if len(running) < 2 || len(tempEntries(t, dir)) != 1 {
				t.Fatalf("before the kill: git processes %v, temporary entries %v; want git, the transport and one clone", describe(running), tempEntries(t, dir))
			}
			bot.kill(t)
			if tc.unsupervised {
				t.Cleanup(func() { killPids(gitsOf(dir)) })
				time.Sleep(time.Second)
				if left := gitsOf(dir); len(left) == 0 {
					t.Fatal("control: without supervision nothing outlived the bot; the supervised case proves nothing")
				}
				return
			}
			testkit.WaitForf(t, 5*time.Second, func() bool { return len(gitsOf(dir)) == 0 },
				func() string { return "git processes of the killed bot still run:" + describe(gitsOf(dir)) })
			if got := tempEntries(t, dir); len(got) != 1 {
				t.Fatalf("after the kill, before the next start: temporary entries %v, want the dead run's clone", got)
			}
			if _, err := New(Options{Dir: dir}); err != nil {
				t.Fatal(err)
			}
			if got := tempEntries(t, dir); len(got) != 0 {
				t.Fatalf("after the next start: temporary entries %v, want none", got)
			}
		})
	}
}

// Two bots may share a workspaces directory: a start removes the dead
// one's temporary clone and keeps the live one's, which then completes.
func TestStartKeepsLiveBotsTempClone(t *testing.T) {
	rem := newSlowRemote(t)
	dir := filepath.Join(t.TempDir(), "workspaces")
	rem.Set(t, "upload", "before 30")
	dead := startFakeBot(t, rem, fakeBotOrders{Dir: dir, Op: "check", Repo: rem.url})
	testkit.WaitFor(t, 20*time.Second, "the first bot's fetch", func() bool { return rem.Started("upload") })
	deadTemp, deadGits := tempEntries(t, dir), gitsOf(dir)
	rem.Set(t, "upload", "before 3")
	live := startFakeBot(t, rem, fakeBotOrders{Dir: dir, Op: "check", Repo: rem.url})
	testkit.WaitFor(t, 20*time.Second, "the second bot's fetch", func() bool { return rem.Started("upload") })
	liveTemp := slices.DeleteFunc(tempEntries(t, dir), func(n string) bool { return slices.Contains(deadTemp, n) })
	if len(deadTemp) != 1 || len(liveTemp) != 1 {
		t.Fatalf("temporary clones: the first bot's %v, the second's %v", deadTemp, liveTemp)
	}
	dead.kill(t)
	testkit.WaitForf(t, 5*time.Second, func() bool {
		return !slices.ContainsFunc(deadGits, func(pid int) bool { return slices.Contains(gitsOf(dir), pid) })
	}, func() string { return "the killed bot's git still runs:" + describe(deadGits) })
	if _, err := New(Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if got := tempEntries(t, dir); !slices.Equal(got, liveTemp) {
		t.Fatalf("after a start beside a live bot: temporary entries %v, want the live bot's %v only", got, liveTemp)
	}
	live.out.WaitMatch(t, 30*time.Second, `(?m)^done <nil>$`)
	if got := tempEntries(t, dir); len(got) != 0 {
		t.Fatalf("after the live bot's clone completed: temporary entries %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "repos")); err != nil {
		t.Fatal(err)
	}
}

// pushSetup is a worktree with one commit to push, made by this process
// through the slow remote (quick for now), for a fake bot to push.
func pushSetup(t *testing.T) (*slowRemote, string, Worktree, string) {
	t.Helper()
	rem := newSlowRemote(t)
	for _, kv := range rem.Env() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	dir := filepath.Join(t.TempDir(), "workspaces")
	m, _ := newManager(t, func(o *Options) { o.Dir = dir })
	wt := create(t, m, rem.url, "cut")
	return rem, dir, wt, commitFile(t, m, wt, "b.txt", "b\n")
}

// remoteBranch is the remote's branch as the real git reads it ("" when
// it has none).
func (r *slowRemote) branch(t *testing.T, name string) string {
	t.Helper()
	out, err := gitRun(t, nil, "--git-dir="+r.dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// A push cut by kill -9 of the bot: no git of it runs on, and the next
// start finds the push, asks the remote, and says what the remote says:
// pushed, not pushed, or unknown when the remote does not answer. The
// control shows why the remote must be asked: without the supervision the
// orphaned push lands after the bot died.
func TestKilledBotPushToldAfterCheck(t *testing.T) {
	for _, tc := range []struct {
		name, receive string // the transport around git-receive-pack
		unsupervised  bool
		upload        string // the transport when the restarted bot asks
		want          CutState
		landed        bool // the remote has the commit after the kill
		// plantLock leaves the lock a git killed as it ended a push leaves
		// in the clone (refs/remotes/origin/<branch>.lock).
		plantLock bool
	}{
		{name: "cut before the remote took it", receive: "before 30", want: CutNotPushed},
		{name: "cut after the remote took it", receive: "after 30", want: CutPushed, landed: true},
		{name: "a ref lock the killed git left in the clone", receive: "before 30", want: CutNotPushed, plantLock: true},
		{name: "the remote does not answer the check", receive: "before 30", upload: "fail", want: CutUnknown},
		{name: "control: unsupervised, the orphan pushes after the bot died", receive: "before 2", unsupervised: true, want: CutPushed, landed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rem, dir, wt, commit := pushSetup(t)
			rem.Set(t, "receive", tc.receive)
			bot := startFakeBot(t, rem, fakeBotOrders{Dir: dir, Op: "push", Worktree: wt, Owner: "slack/T1/C1/1.2", Unsupervised: tc.unsupervised})
			testkit.WaitFor(t, 20*time.Second, "the push to reach the slow transport", func() bool { return rem.Started("receive") })
			if strings.HasPrefix(tc.receive, "after") {
				testkit.WaitFor(t, 10*time.Second, "the remote to take the push", func() bool { return rem.branch(t, wt.Branch) == commit })
			}
			bot.kill(t)
			if tc.unsupervised {
				t.Cleanup(func() { killPids(gitsOf(dir)) })
				testkit.WaitFor(t, 10*time.Second, "control: the orphaned push to land after the bot died", func() bool { return rem.branch(t, wt.Branch) == commit })
			} else {
				testkit.WaitForf(t, 5*time.Second, func() bool { return len(gitsOf(dir)) == 0 },
					func() string { return "git processes of the killed bot still run:" + describe(gitsOf(dir)) })
				time.Sleep(200 * time.Millisecond) // a push still running would land about now
			}
			if got := rem.branch(t, wt.Branch) == commit; got != tc.landed {
				t.Fatalf("the remote has the commit: %v, want %v", got, tc.landed)
			}

			if tc.plantLock {
				lock := filepath.Join(dir, "repos", filepath.Base(filepath.Dir(wt.Path)), "refs", "remotes", "origin", wt.Branch+".lock")
				writeFile(t, filepath.Dir(lock), filepath.Base(lock), "")
				old := time.Now().Add(-time.Minute)
				if err := os.Chtimes(lock, old, old); err != nil {
					t.Fatal(err)
				}
			}
			rem.Set(t, "upload", tc.upload)
			m, err := New(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			cuts, err := m.CutPushes()
			if err != nil || len(cuts) != 1 {
				t.Fatalf("CutPushes = %+v, %v; want the one cut push", cuts, err)
			}
			c := cuts[0]
			if c.Owner != "slack/T1/C1/1.2" || c.Commit != commit || c.Worktree != wt {
				t.Fatalf("cut push %+v; want %s of %+v for its owner", c, commit, wt)
			}
			chk := m.CheckCut(testCtx(t), c)
			if chk.State != tc.want {
				t.Fatalf("CheckCut = %+v, want state %d", chk, tc.want)
			}
			switch tc.want {
			case CutPushed:
				if chk.Remote != commit || unpushed(t, m, wt) != 0 {
					t.Errorf("pushed: remote at %s, want %s; %d unpushed", chk.Remote, commit, unpushed(t, m, wt))
				}
			case CutNotPushed:
				if chk.Remote != "" {
					t.Errorf("not pushed: remote at %q, want no branch", chk.Remote)
				}
			case CutUnknown:
				if chk.Err == nil || !strings.Contains(chk.Err.Error(), "Connection refused") {
					t.Errorf("unknown: %v, want what the transport said", chk.Err)
				}
			}
			if err := m.ForgetCut(c); err != nil {
				t.Fatal(err)
			}
			if cuts, err := m.CutPushes(); err != nil || len(cuts) != 0 {
				t.Fatalf("CutPushes after ForgetCut = %+v, %v", cuts, err)
			}
			// The retried push goes through.
			rem.Set(t, "receive", "")
			rem.Set(t, "upload", "")
			if err := m.Push(testCtx(t), wt, "slack/T1/C1/1.2"); err != nil {
				t.Fatalf("the retried push: %v", err)
			}
			if got := rem.branch(t, wt.Branch); got != commit {
				t.Fatalf("after the retried push the remote is at %q, want %s", got, commit)
			}
			// The clone knows it, and fetches again.
			if n := unpushed(t, m, wt); n != 0 {
				t.Errorf("after the retried push: %d unpushed", n)
			}
			if _, err := m.Check(testCtx(t), rem.url); err != nil {
				t.Errorf("a fetch after the retried push: %v", err)
			}
		})
	}
}

// BenchmarkGitCall is one trivial git call (rev-parse) through
// Manager.run: as plumbing is run (the kernel kills it with the bot), as
// a call that talks to the remote is (a keeper per call), and as every
// call ran before its supervision: what the supervision costs a call.
func BenchmarkGitCall(b *testing.B) {
	rem := newRemote(b, "main", map[string]string{"a.txt": "a\n"})
	for _, bc := range []struct {
		name                 string
		keeper, unsupervised bool
	}{{"plumbing", false, false}, {"keeper", true, false}, {"unsupervised", false, true}} {
		b.Run(bc.name, func(b *testing.B) {
			m, _ := newManager(b)
			ctx := testCtx(b)
			if _, err := m.Check(ctx, rem.dir); err != nil {
				b.Fatal(err)
			}
			r, err := m.repoRef(rem.dir)
			if err != nil {
				b.Fatal(err)
			}
			m.unsupervised = bc.unsupervised
			for b.Loop() {
				if _, err := m.run(ctx, gitCall{repo: r, slow: bc.keeper, args: []string{"rev-parse", "--verify", "refs/remotes/origin/main"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The calls run without a keeper start no process of their own: git's
// trace2 events (GIT_TRACE2_EVENT, added to the environment here only)
// list every child a git starts, over a thread's whole life but its
// clone, fetch, worktree add and push.
func TestQuickGitStartsNothing(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "leaf")
	trace := filepath.Join(t.TempDir(), "trace2.json")
	m.env = append(m.env, "GIT_TRACE2_EVENT="+trace)
	writeFile(t, wt.Path, "c.txt", "c\n")
	writeFile(t, wt.Path, "sub/b.txt", "b2\n")
	snap, err := m.Snapshot(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Changes(ctx, wt, wt.Base, snap); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Diff(ctx, wt); err != nil {
		t.Fatal(err)
	}
	commitFile(t, m, wt, "d.txt", "d\n")
	unpushed(t, m, wt)
	if _, err := m.Remove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	cmds, children := trace2(t, trace)
	for _, c := range children {
		t.Errorf("a git run without a keeper started a process: %s", c)
	}
	if len(cmds) < 8 {
		t.Fatalf("trace2 saw %d git calls, want the whole life: %q", len(cmds), cmds)
	}
	// The control: a fetch, run with a keeper, does start processes, and
	// the trace shows them.
	if err := os.Remove(trace); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Check(ctx, rem.dir); err != nil {
		t.Fatal(err)
	}
	if _, children := trace2(t, trace); len(children) == 0 {
		t.Fatal("control: trace2 saw no process started by a fetch; the test proves nothing")
	}
}

// trace2 reads git's trace2 events: the calls (their last arguments) and
// the processes they started.
func trace2(t *testing.T, path string) (cmds, children []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		var ev struct {
			Event string   `json:"event"`
			Argv  []string `json:"argv"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("trace2 line %q: %v", line, err)
		}
		switch ev.Event {
		case "start":
			cmds = append(cmds, strings.Join(ev.Argv[len(ev.Argv)-min(len(ev.Argv), 4):], " "))
		case "child_start":
			children = append(children, line)
		}
	}
	return cmds, children
}
