package claudeproc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testcli"
)

// These tests run the real CLI in the bubblewrap sandbox and attack it from
// inside, with Bash commands the fake model asks for and the test allows.
// Each attack also runs under Local, as the control: there the oracle must
// see it succeed, so a sandbox that hid nothing would fail.

// sandboxFixture is what a sandboxed session must not see or touch. It
// lives outside /tmp: the sandbox has a /tmp of its own, so a path there
// would be absent whatever the runner hid.
type sandboxFixture struct {
	state   string // the bot's state directory, hidden
	db      string // a file in it
	secret  string // a secret file beside the bot, hidden
	outside string // a directory that is neither hidden nor the session's
	homes   string // HomeBase
	marker  string // random, in every secret's content
}

func newSandboxFixture(t *testing.T) *sandboxFixture {
	t.Helper()
	testcli.Bwrap(t)
	base, err := os.MkdirTemp("/var/tmp", "claudeops-sandbox-test-")
	if err != nil {
		t.Fatalf("need a directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	var b [8]byte
	_, _ = rand.Read(b[:])
	fx := &sandboxFixture{
		state:   filepath.Join(base, "state"),
		secret:  filepath.Join(base, "bot-token"),
		outside: filepath.Join(base, "outside"),
		homes:   filepath.Join(base, "homes"),
		marker:  "secret-" + hex.EncodeToString(b[:]),
	}
	fx.db = filepath.Join(fx.state, "claudeops.db")
	for _, d := range []string{fx.state, fx.outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{fx.db, fx.secret} {
		if err := os.WriteFile(f, []byte(fx.marker+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

func (fx *sandboxFixture) runner(hide ...string) Sandbox {
	return Sandbox{HomeBase: fx.homes, Hide: append([]string{fx.state, fx.secret}, hide...)}
}

// allowTurn sends cmd for the model to run through Bash, allows whatever
// the CLI asks, and returns what the tool printed.
func allowTurn(t *testing.T, p *Process, r *recorder, from int, cmd string) (string, int) {
	t.Helper()
	if err := p.SendText(cmd); err != nil {
		t.Fatal(err)
	}
	for {
		ev, i := r.waitFor(from, "can_use_tool or result for "+cmd, func(ev Event) bool { return isCanUseTool(ev) || isResult(ev) })
		from = i + 1
		if c, ok := ev.(*ControlRequest); ok {
			if err := p.Allow(c.RequestID, nil, nil); err != nil {
				t.Fatal(err)
			}
			continue
		}
		return strings.TrimPrefix(ev.(*Result).Result, "tool said: "), from
	}
}

// processesWith lists the pids whose command line contains s.
func processesWith(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// probeEnv is what an attack's oracle may look at.
type probeEnv struct {
	fx        *sandboxFixture
	dir, home string // the session's, as seen from outside
	out       string // what the command printed inside
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// hostileProbe is one attack of TestSandboxHostile and its oracle.
type hostileProbe struct {
	name string
	cmd  func(e probeEnv) string
	// reached reports, from outside, that the command got at what it
	// was after.
	reached func(e probeEnv) bool
	// local and sandbox are the outcomes wanted; skipLocal when the
	// control would change the host (the tests run as root).
	local, sandbox bool
	skipLocal      bool
}

// hostileProbes is TestSandboxHostile's table, built by a function because
// several attacks aim at bot, the pid that stands for the bot's process.
func hostileProbes(bot string) []hostileProbe {
	return []hostileProbe{
		{name: "list the bot's pid", cmd: func(probeEnv) string { return "ls /proc" },
			reached: func(e probeEnv) bool { return slices.Contains(strings.Fields(e.out), bot) },
			local:   true},
		{name: "read the bot's environment", cmd: func(probeEnv) string { return "cat /proc/" + bot + "/environ | tr '\\0' '\\n'" },
			reached: func(e probeEnv) bool { return strings.Contains(e.out, "PATH=") },
			local:   true},
		{name: "signal the bot", cmd: func(probeEnv) string { return "kill -0 " + bot + " && echo alive" },
			reached: func(e probeEnv) bool { return strings.Contains(e.out, "alive") },
			local:   true},
		{name: "read the database", cmd: func(e probeEnv) string { return "cat " + e.fx.db },
			reached: func(e probeEnv) bool { return strings.Contains(e.out, e.fx.marker) },
			local:   true},
		{name: "list the state directory", cmd: func(e probeEnv) string { return "ls -A " + e.fx.state + "; echo end" },
			reached: func(e probeEnv) bool { return strings.Contains(e.out, "claudeops.db") },
			local:   true},
		{name: "read a secret file", cmd: func(e probeEnv) string { return "cat " + e.fx.secret },
			reached: func(e probeEnv) bool { return strings.Contains(e.out, e.fx.marker) },
			local:   true},
		{name: "read a hidden file inside the working directory", cmd: func(probeEnv) string { return "cat .env" },
			reached: func(e probeEnv) bool { return strings.Contains(e.out, e.fx.marker) },
			local:   true},
		{name: "unmount what hides the state", cmd: func(e probeEnv) string {
			// A new user namespace gives every capability over a new mount
			// namespace; the kernel locks the mounts it inherits. -Urm
			// cannot map uid 0 when the test runs as root; -Um can.
			return "for f in -Um -Urm; do unshare $f sh -c 'umount -l " + e.fx.state + "; cat " + e.fx.db + "'; done 2>&1"
		},
			reached: func(e probeEnv) bool { return strings.Contains(e.out, e.fx.marker) },
			local:   true},
		{name: "write outside the working directory", cmd: func(e probeEnv) string { return "touch " + e.fx.outside + "/pwned" },
			reached: func(e probeEnv) bool { return exists(filepath.Join(e.fx.outside, "pwned")) },
			local:   true},
		{name: "write into the state directory", cmd: func(e probeEnv) string { return "echo x > " + e.fx.state + "/pwned" },
			reached: func(e probeEnv) bool { return exists(filepath.Join(e.fx.state, "pwned")) },
			local:   true},
		{name: "write beside the home", cmd: func(probeEnv) string { return `touch "$HOME/../pwned"` },
			reached:   func(e probeEnv) bool { return exists(filepath.Join(filepath.Dir(e.home), "pwned")) },
			skipLocal: true},
		{name: "write to /usr", cmd: func(e probeEnv) string { return "touch /usr/claudeops-pwned-" + e.fx.marker },
			reached:   func(e probeEnv) bool { return exists("/usr/claudeops-pwned-" + e.fx.marker) },
			skipLocal: true},
		{name: "write to /etc", cmd: func(e probeEnv) string { return "echo x >> /etc/claudeops-pwned-" + e.fx.marker },
			reached:   func(e probeEnv) bool { return exists("/etc/claudeops-pwned-" + e.fx.marker) },
			skipLocal: true},
		{name: "write in the working directory", cmd: func(probeEnv) string { return "echo x > made.txt" },
			reached: func(e probeEnv) bool { return exists(filepath.Join(e.dir, "made.txt")) },
			local:   true, sandbox: true},
		{name: "write in the home", cmd: func(probeEnv) string { return `touch "$HOME/made.txt"` },
			reached: func(e probeEnv) bool { return exists(filepath.Join(e.home, "made.txt")) },
			local:   true, sandbox: true},
	}
}

// TestSandboxHostile: from inside a session, the bot's processes, state and
// secrets are out of reach and only the working directory and the home are
// writable; under Local (the control) the same commands reach them.
func TestSandboxHostile(t *testing.T) {
	bot := strconv.Itoa(os.Getpid()) // the test process stands for the bot
	probes := hostileProbes(bot)
	for _, sandboxed := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "sandbox"}[sandboxed], func(t *testing.T) {
			fx := newSandboxFixture(t)
			c := newCLI(t, commandScript())
			if err := os.WriteFile(filepath.Join(c.dir, ".env"), []byte(fx.marker), 0o600); err != nil {
				t.Fatal(err)
			}
			// The database is hidden twice (alone and with its directory):
			// no mount point for it may show in the directory.
			sb := fx.runner(filepath.Join(c.dir, ".env"), fx.db)
			home := c.home
			p, r := c.start(func(o *Options) {
				o.Runner = Local{}
				if sandboxed {
					o.Runner, o.Session = sb, Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1.0"}
					home = sb.home(o.Session)
				}
			})
			t.Cleanup(func() {
				os.Remove("/usr/claudeops-pwned-" + fx.marker)
				os.Remove("/etc/claudeops-pwned-" + fx.marker)
			})
			from := 0
			for _, pr := range probes {
				if pr.skipLocal && !sandboxed {
					continue
				}
				e := probeEnv{fx: fx, dir: c.dir, home: home}
				e.out, from = allowTurn(t, p, r, from, pr.cmd(e))
				t.Logf("%s: %s", pr.name, e.out)
				want := pr.local
				if sandboxed {
					want = pr.sandbox
				}
				if got := pr.reached(e); got != want {
					t.Errorf("%s: reached = %v, want %v; the command printed:\n%s", pr.name, got, want, e.out)
				}
			}
		})
	}
}

// TestSandboxCloseEndsEverything: a tool that left the CLI's process group
// (setsid) is still ended when the session closes, and so is bwrap. The
// control: under Local such a tool outlives its session.
func TestSandboxCloseEndsEverything(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "sandbox"}[sandboxed], func(t *testing.T) {
			fx := newSandboxFixture(t)
			c := newCLI(t, commandScript())
			p, r := c.start(func(o *Options) {
				o.Runner = Local{}
				if sandboxed {
					o.Runner = fx.runner()
				}
			})
			// A duration no other process has: the marker in its cmdline.
			sleep := "3000." + strconv.Itoa(int(time.Now().UnixNano()%1e9))
			t.Cleanup(func() {
				for _, pid := range processesWith("sleep " + sleep) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			out, _ := allowTurn(t, p, r, 0, "setsid -f sleep "+sleep+" >/dev/null 2>&1; sleep 300 >/dev/null 2>&1 & echo started")
			// setsid -f forks before it execs sleep: for a moment two
			// processes show the marker (seen on a loaded machine).
			for deadline := time.Now().Add(10 * time.Second); len(processesWith("sleep "+sleep)) > 1 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			if !strings.Contains(out, "started") || len(processesWith("sleep "+sleep)) != 1 {
				t.Fatalf("the tool did not start: %q, processes %v", out, processesWith("sleep "+sleep))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			p.Close(ctx)
			<-r.done
			deadline := time.Now().Add(10 * time.Second)
			for len(processesWith("sleep "+sleep)) > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			left := processesWith("sleep " + sleep)
			if sandboxed && len(left) > 0 {
				t.Errorf("a tool outlived its sandboxed session: %v", left)
			}
			if !sandboxed && len(left) == 0 {
				t.Errorf("control: the setsid tool should outlive a local session")
			}
			if sandboxed {
				if bw := processesWith(fx.state); len(bw) > 0 {
					t.Errorf("bwrap outlived its session: %v", bw)
				}
			}
		})
	}
}

// TestSandboxHomePerThread: two threads of one channel get homes of their
// own (0700, each out of the other's sight: not listed, a file the other
// wrote unreadable), and a thread resumes in the sandbox after its process
// was closed, while from the other thread the same session id finds
// nothing, as it does in the thread once its home is removed.
func TestSandboxHomePerThread(t *testing.T) {
	fx := newSandboxFixture(t)
	c := newCLI(t, memoryScript())
	sb := fx.runner()
	const ch = "matrix/!a:example.org"
	a := Session{Channel: ch, Thread: ch + "/$1"}
	b := Session{Channel: ch, Thread: ch + "/$2"}
	homeA, homeB := sb.home(a), sb.home(b)
	if homeA == homeB {
		t.Fatalf("two threads share the home %s", homeA)
	}
	start := func(s Session) (*Process, *recorder) {
		return c.start(func(o *Options) { o.Runner, o.Session = sb, s })
	}

	pa, ra := start(a)
	out, from := allowTurn(t, pa, ra, 0, `$ echo "$HOME"; echo `+fx.marker+` > "$HOME/a.txt"`)
	if strings.TrimSpace(out) != homeA {
		t.Errorf("thread A's HOME = %q, want %s", out, homeA)
	}
	session := rememberWord(t, pa, ra, from)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pa.Close(ctx)

	pb, rb := start(b)
	out, _ = allowTurn(t, pb, rb, 0, `$ echo "$HOME"; echo --; ls -A "$HOME/.."; echo --; cat `+homeA+`/a.txt 2>&1; true`)
	if parts := strings.Split(out, "\n--\n"); len(parts) != 3 || parts[0] != homeB ||
		parts[1] != filepath.Base(homeB) || strings.Contains(parts[2], fx.marker) {
		t.Errorf("thread B has the wrong home, or sees thread A's; it printed:\n%s", out)
	}
	pb.Close(ctx)
	for _, h := range []string{homeA, homeB} {
		if fi, err := os.Stat(h); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("home %s: %v %v", h, fi.Mode(), err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(homeA, "a.txt")); err != nil || !strings.Contains(string(b), fx.marker) {
		t.Errorf("thread A's home lost what it wrote: %q %v", b, err)
	}
	checkResumePerThread(t, c, sb, a, b, session)
}

// TestSandboxCLIUnderTmp: the sandbox's /tmp is private, so a CLI
// installed under /tmp (a checkout there, as CI may have) would vanish from
// inside it. Installed the npm way (a link in node_modules/.bin to the
// package's binary) under the test's /tmp, the CLI still runs a turn.
func TestSandboxCLIUnderTmp(t *testing.T) {
	fx := newSandboxFixture(t)
	c := newCLI(t, commandScript())
	real, err := filepath.EvalSymlinks(c.bin)
	if err != nil {
		t.Fatal(err)
	}
	install := t.TempDir()
	if !strings.HasPrefix(install, "/tmp/") {
		t.Skipf("the test's temporary directory %s is not under /tmp", install)
	}
	pkg := filepath.Join(install, "node_modules", "pkg", "bin")
	link := filepath.Join(install, "node_modules", ".bin", "claude")
	for _, d := range []string{pkg, filepath.Dir(link)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A hard link: the binary is hundreds of megabytes.
	if err := os.Link(real, filepath.Join(pkg, "claude.exe")); err != nil {
		t.Skipf("cannot link the CLI into /tmp (%v)", err)
	}
	if err := os.Symlink("../pkg/bin/claude.exe", link); err != nil {
		t.Fatal(err)
	}
	p, r := c.start(func(o *Options) {
		o.Bin = link
		o.Runner, o.Session = fx.runner(), Session{Channel: "slack/T1/C9", Thread: "slack/T1/C9/1.0"}
	})
	if out, _ := allowTurn(t, p, r, 0, "echo ran-in-the-sandbox"); !strings.Contains(out, "ran-in-the-sandbox") {
		t.Errorf("the turn printed %q", out)
	}
}
