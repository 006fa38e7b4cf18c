package kubernetes

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/kubetest"
)

// podUID is who the test Pods run as: not root, not the test's user.
const podUID = 1000

// testBed is a runner on the real cluster: its own namespace and
// instance, the work claim a host directory the test reads as the oracle.
type testBed struct {
	c     *kubetest.Cluster
	ns    string
	claim string // the claim's host directory (the bot's WorkPath)
	r     *Runner
}

func newBed(t *testing.T, mod func(*Config)) *testBed {
	t.Helper()
	c := kubetest.Require(t)
	claim := t.TempDir() // made first, removed last: after the namespace's Pods
	b := &testBed{c: c, ns: c.Namespace(t), claim: claim}
	c.HostPathClaim(t, b.ns, "work", b.claim)
	b.r = b.runner(t, "t-"+randHex(4), mod)
	return b
}

func (b *testBed) runner(t testing.TB, instance string, mod func(*Config)) *Runner {
	t.Helper()
	cfg := Config{
		Namespace: b.ns, Image: b.c.Image, Instance: instance, UID: podUID, GID: podUID,
		WorkClaim: "work", WorkPath: b.claim, HostNetwork: true, StartTimeout: 3 * time.Minute,
	}
	if mod != nil {
		mod(&cfg)
	}
	r, err := New(cfg, b.c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newModelBed is a bed whose Pods get the model's key from the Secret
// "model", as the operator's Secret gives it.
func newModelBed(t *testing.T, key string) *testBed {
	t.Helper()
	b := newBed(t, func(c *Config) { c.Secret = "model" })
	_, err := b.c.Client().CoreV1().Secrets(b.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "model"}, StringData: map[string]string{"ANTHROPIC_API_KEY": key},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// workDir makes a session directory on the claim, the Pod user's.
func (b *testBed) workDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(b.claim, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, podUID, podUID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// session is a started Pod with its stdio as the bot holds it.
type session struct {
	h     claudeproc.Handle
	in    *os.File
	lines chan string
}

func (b *testBed) start(t *testing.T, r *Runner, spec claudeproc.Spec) *session {
	t.Helper()
	fs, err := pipes()
	if err != nil {
		t.Fatal(err)
	}
	spec.Stdin, spec.Stdout, spec.Stderr = fs[0], fs[3], fs[5]
	if spec.Session == (claudeproc.Session{}) {
		spec.Session = claudeproc.Session{Channel: "console/" + t.Name(), Thread: "console/" + t.Name() + "/1"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h, err := r.Start(ctx, spec)
	if err != nil {
		for _, f := range []*os.File{fs[1], fs[2], fs[4]} {
			f.Close()
		}
		t.Fatalf("start: %v", err)
	}
	s := &session{h: h, in: fs[1], lines: make(chan string, 100)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(fs[2])
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	go func() { _, _ = io.Copy(io.Discard, fs[4]) }()
	return s
}

func (s *session) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			t.Fatal("the Pod's output ended")
		}
		return l
	case <-time.After(2 * time.Minute):
		t.Fatal("no line from the Pod")
	}
	return ""
}

// wait ends the session the way the bot does (its input closed) and
// returns how it ended.
func (s *session) wait(t *testing.T) claudeproc.ExitStatus {
	t.Helper()
	s.in.Close()
	st, err := s.h.Wait()
	if err != nil {
		t.Errorf("wait: %v", err)
	}
	return st
}

func (b *testBed) pods(t *testing.T, selector string) []corev1.Pod {
	t.Helper()
	l, err := b.c.Client().CoreV1().Pods(b.ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func randHex(n int) string {
	p := make([]byte, n)
	_, _ = rand.Read(p)
	return hex.EncodeToString(p)
}

// TestPodSeesOnlyItsOwn asks the Pod's own kernel what a session can see
// and do: not root, no capabilities, no service-account token, no
// credential of the bot's but the operator's Secret, its working directory
// and nothing else of the claim, the CLI's state writable, the pause
// process as PID 1. What it writes is on the claim, as its user. The
// Pod's spec, as anyone who may read Pods sees it, holds no credential.
func TestPodSeesOnlyItsOwn(t *testing.T) {
	b := newModelBed(t, "sk-from-the-secret")
	dir := b.workDir(t, "ch/a")
	other := b.workDir(t, "ch/b")
	if err := os.WriteFile(filepath.Join(other, "theirs.txt"), []byte("another thread's"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
echo "uid=$(id -u)"
echo "cap=$(awk '/^CapEff/ {print $2}' /proc/self/status)"
if [ -e /var/run/secrets/kubernetes.io/serviceaccount ]; then echo token=yes; else echo token=no; fi
echo "key=$ANTHROPIC_API_KEY"
if env | grep -q "sk-bot-$(echo own)"; then echo botkey=leaked; else echo botkey=absent; fi
echo "siblings=$(ls -A "$(dirname "$PWD")" | tr '\n' ' ')"
if cat ../b/theirs.txt 2>/dev/null; then echo other=read; else echo other=unreadable; fi
echo made > made-in-pod.txt && echo write=ok
touch "$HOME/.claude/state" && echo home=ok
echo "pid1=$(tr '\0' ' ' </proc/1/cmdline)"
echo done
read -r wait_for_the_test || true
`
	s := b.start(t, b.r, claudeproc.Spec{
		Bin: "/bin/sh", Args: []string{"-c", script}, Dir: dir,
		Env: []string{"ANTHROPIC_API_KEY=sk-bot-own", "HTTPS_PROXY=http://u:sk-bot-own@proxy:1", "PATH=/host/only", "LANG=C.UTF-8"},
	})
	got := map[string]string{}
	for l := s.next(t); l != "done"; l = s.next(t) {
		k, v, _ := strings.Cut(l, "=")
		got[k] = strings.TrimSpace(v)
	}
	want := map[string]string{
		"uid": "1000", "cap": "0000000000000000", "token": "no", "key": "sk-from-the-secret", "botkey": "absent",
		"siblings": "a", "other": "unreadable", "write": "ok", "home": "ok",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !strings.Contains(got["pid1"], "pause") {
		t.Errorf("PID 1 is %q, want the pause process", got["pid1"])
	}
	pods := b.pods(t, b.r.Selector())
	if len(pods) != 1 {
		t.Fatalf("%d Pods of the runner, want 1", len(pods))
	}
	raw, _ := json.Marshal(pods[0])
	if strings.Contains(string(raw), "sk-bot-own") {
		t.Error("the Pod object holds the bot's credential")
	}
	if st := s.wait(t); st.Code != 0 || st.Reason != "" {
		t.Errorf("ended %+v, want exit 0", st)
	}
	fi, err := os.Stat(filepath.Join(dir, "made-in-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Sys().(*syscall.Stat_t).Uid != podUID {
		t.Errorf("the Pod's file is uid %d's", fi.Sys().(*syscall.Stat_t).Uid)
	}
	if left := b.pods(t, b.r.Selector()); len(left) != 0 {
		t.Errorf("%d Pods left after the session ended", len(left))
	}
}

// TestPodDeletedEndsTheSession: someone deletes a running session's Pod;
// the session ends, saying so, and its output ends with it.
func TestPodDeletedEndsTheSession(t *testing.T) {
	b := newBed(t, nil)
	s := b.start(t, b.r, claudeproc.Spec{Bin: "/bin/sh", Args: []string{"-c", "echo ready; exec cat"}, Dir: b.workDir(t, "w")})
	if l := s.next(t); l != "ready" {
		t.Fatalf("first line %q", l)
	}
	// A round trip through the attach: the stream is live both ways.
	if _, err := io.WriteString(s.in, "ping\n"); err != nil {
		t.Fatal(err)
	}
	if l := s.next(t); l != "ping" {
		t.Fatalf("echo %q", l)
	}
	name := b.pods(t, b.r.Selector())[0].Name
	if err := b.c.Client().CoreV1().Pods(b.ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := s.h.Wait()
	if err != nil {
		t.Errorf("wait: %v", err)
	}
	if st.Reason != "its Pod was deleted" {
		t.Errorf("ended %+v, want the Pod's deletion as the reason", st)
	}
	s.in.Close()
	for range s.lines {
	}
}

// TestPodOutOfMemory: a session whose tools outgrow the memory limit ends
// with the kernel's verdict told, not a bare exit code.
func TestPodOutOfMemory(t *testing.T) {
	b := newBed(t, func(c *Config) {
		c.MemoryLimit = resource.MustParse("64Mi")
		c.MemoryRequest = resource.MustParse("32Mi")
	})
	s := b.start(t, b.r, claudeproc.Spec{Bin: "/bin/sh", Args: []string{"-c", "echo up; exec tail /dev/zero"}, Dir: b.workDir(t, "w")})
	if l := s.next(t); l != "up" {
		t.Fatalf("first line %q", l)
	}
	st, err := s.h.Wait()
	if err != nil {
		t.Errorf("wait: %v", err)
	}
	if !strings.HasPrefix(st.Reason, "its Pod ran out of memory (OOMKilled") || st.Signal != syscall.SIGKILL {
		t.Errorf("ended %+v, want the OOM kill told", st)
	}
	s.in.Close()
	for range s.lines {
	}
}

// TestWaitingForCapacity: a Pod no node has room for is told through
// Progress with the scheduler's words, given up after StartTimeout, and
// deleted.
func TestWaitingForCapacity(t *testing.T) {
	b := newBed(t, func(c *Config) {
		c.CPURequest.Set(4096)
		c.StartTimeout = 8 * time.Second
	})
	var mu sync.Mutex
	var told []string
	fs, err := pipes()
	if err != nil {
		t.Fatal(err)
	}
	defer closeFiles(fs[1], fs[2], fs[4])
	_, err = b.r.Start(context.Background(), claudeproc.Spec{
		Bin: "/bin/true", Dir: b.workDir(t, "w"), Session: claudeproc.Session{Channel: "c", Thread: "t"},
		Stdin: fs[0], Stdout: fs[3], Stderr: fs[5],
		Progress: func(s string) { mu.Lock(); told = append(told, s); mu.Unlock() },
	})
	if err == nil || !strings.Contains(err.Error(), "did not run within 8s") {
		t.Errorf("start: %v, want it given up", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Each line says what the scheduler said; the first may name the work
	// claim made a moment before (the scheduler's cache had not seen it
	// yet: a bed's race, not a cluster's state), so the cpu may come later.
	cpu := false
	for _, s := range told {
		if !strings.HasPrefix(s, "Waiting for capacity in the cluster: ") {
			t.Errorf("told %q", s)
		}
		cpu = cpu || strings.Contains(s, "Insufficient cpu")
	}
	if !cpu {
		t.Errorf("told %q, none naming the cpu the Pod asks for", told)
	}
	if left := b.pods(t, b.r.Selector()); len(left) != 0 {
		t.Errorf("%d Pods left after the start was given up", len(left))
	}
}

// TestPrepareRemovesLeftovers: a bot that died left its session's Pod; the
// next run of the same instance deletes it before anything starts, and
// leaves another instance's Pod alone.
func TestPrepareRemovesLeftovers(t *testing.T) {
	b := newBed(t, nil)
	dead := b.start(t, b.r, claudeproc.Spec{Bin: "/bin/sh", Args: []string{"-c", "echo up; exec sleep 600"}, Dir: b.workDir(t, "a")})
	other := b.runner(t, "other-"+randHex(3), nil)
	kept := b.start(t, other, claudeproc.Spec{Bin: "/bin/sh", Args: []string{"-c", "echo up; exec cat"}, Dir: b.workDir(t, "b")})
	dead.next(t)
	kept.next(t)

	next := b.runner(t, b.r.cfg.Instance, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := next.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if left := b.pods(t, b.r.Selector()); len(left) != 0 {
		t.Errorf("%d Pods of the dead run left", len(left))
	}
	if n := len(b.pods(t, other.Selector())); n != 1 {
		t.Errorf("the other instance has %d Pods, want its 1", n)
	}
	// The dead run's session ends, as its bot would have seen.
	if st := dead.wait(t); st.Reason != "its Pod was deleted" {
		t.Errorf("the leftover ended %+v", st)
	}
	if st := kept.wait(t); st.Code != 0 {
		t.Errorf("the other instance's session ended %+v", st)
	}
}

// TestCLIVersionInAPod: the start check runs the image's CLI in a Pod.
func TestCLIVersionInAPod(t *testing.T) {
	b := newBed(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	v, err := b.r.CLIVersion(ctx, "claude")
	if err != nil || !strings.Contains(v, "(Claude Code)") {
		t.Errorf("CLIVersion = %q, %v", v, err)
	}
	if _, err := b.r.CLIVersion(ctx, "/no/such/claude"); err == nil {
		t.Error("a missing CLI passed the check")
	} else {
		t.Logf("missing CLI: %v", err)
	}
	if left := b.pods(t, b.r.Selector()); len(left) != 0 {
		t.Errorf("%d probe Pods left", len(left))
	}
}
