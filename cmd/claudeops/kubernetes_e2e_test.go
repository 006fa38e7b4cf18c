//go:build !nokubernetes

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/kubetest"
	"github.com/claudeops/claudeops/internal/testcli"
)

// botUID is who the bot runs as in the Kubernetes tests, as in its image:
// not root, and the sessions' Pods run as the same user.
const botUID = 1000

// kubeBed is a bot deployment on the real cluster: a namespace, the work
// claim (a host directory: the oracle of what sessions wrote), the model
// credentials in a Secret, the bot's kubeconfig for a ServiceAccount bound
// to deploy/kubernetes' Role, and the test binary where the bot's user
// can run it.
type kubeBed struct {
	c     *kubetest.Cluster
	ns    string
	claim string
	bin   string
	env   []string
}

func newKubeBed(t *testing.T, script fakeanthropic.Script, extra ...string) *kubeBed {
	t.Helper()
	c := kubetest.Require(t)
	ns := c.Namespace(t)
	root := userDir(t, "")
	b := &kubeBed{c: c, ns: ns, claim: userDir(t, filepath.Join(root, "claim"))}
	c.HostPathClaim(t, ns, "work", b.claim)
	_, err := c.Client().CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "model"}, StringData: map[string]string{"ANTHROPIC_API_KEY": "sk-from-the-secret"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(root, "kubeconfig")
	copyForBot(t, c.ServiceAccountKubeconfig(t, ns, roleRules(t)), kubeconfig, 0o600)
	b.bin = filepath.Join(root, "claudeops.test")
	copyForBot(t, os.Args[0], b.bin, 0o755)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if key := req.Header.Get("x-api-key"); key != "sk-from-the-secret" {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("wrong credentials: " + key)}}
		}
		return script(ctx, req)
	})
	state := userDir(t, filepath.Join(root, "state"))
	work := userDir(t, filepath.Join(b.claim, "default"))
	b.env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + userDir(t, filepath.Join(root, "home")), "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-bot-own",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_CLAUDE_BIN=claude", "CLAUDEOPS_WORKDIR=" + work,
		"CLAUDEOPS_WORKSPACES=" + filepath.Join(b.claim, "workspaces"), "CLAUDEOPS_LOG_LEVEL=debug",
		"CLAUDEOPS_RUNNER=kubernetes", "CLAUDEOPS_RUNNER_IMAGE=" + c.Image, "CLAUDEOPS_RUNNER_MEMORY=1g",
		"CLAUDEOPS_KUBERNETES_KUBECONFIG=" + kubeconfig, "CLAUDEOPS_KUBERNETES_NAMESPACE=" + ns,
		"CLAUDEOPS_KUBERNETES_CLAIM=work", "CLAUDEOPS_KUBERNETES_CLAIM_PATH=" + b.claim,
		"CLAUDEOPS_KUBERNETES_SECRET=model", "CLAUDEOPS_KUBERNETES_HOST_NETWORK=true",
		"CLAUDEOPS_KUBERNETES_INSTANCE=e2e", "CLAUDEOPS_KUBERNETES_CPU_REQUEST=100m", "CLAUDEOPS_KUBERNETES_MEMORY_REQUEST=128Mi",
	}, extra...)
	return b
}

// start runs the bot as botUID.
func (b *kubeBed) start(t *testing.T) *botProc {
	t.Helper()
	cmd := exec.Command(b.bin, "console")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: botUID, Gid: botUID}}
	return startBotCmd(t, cmd, b.env)
}

// pods are the bot's session Pods as the API server has them.
func (b *kubeBed) pods(t *testing.T) []corev1.Pod {
	t.Helper()
	l, err := b.c.Client().CoreV1().Pods(b.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "claudeops.io/instance=e2e"})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// waitPods waits until the bot has n Pods (not counting those being
// deleted when n is 0... nor otherwise: a Pod is one until gone).
func (b *kubeBed) waitPods(t *testing.T, n int) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p := b.pods(t)
		if len(p) == n {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Pods of the bot, want %d", len(p), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// userDir makes dir (a fresh temporary one when "") for the bot's user.
func userDir(t *testing.T, dir string) string {
	t.Helper()
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "claudeops-k8s-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, botUID, botUID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyForBot copies a file (the new one: O_EXCL) for the bot's user, with mode.
func copyForBot(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	if err := copyFile(from, to); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(to, botUID, botUID); err != nil {
		t.Fatal(err)
	}
}

// roleRules are the rules of the Role the repository's manifests give the
// bot: the tests run the bot with exactly those.
func roleRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testcli.RepoRoot(), "deploy", "kubernetes", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			continue
		}
		if r, ok := obj.(*rbacv1.Role); ok {
			return r.Rules
		}
	}
	t.Fatal("deploy/kubernetes/role.yaml holds no Role")
	return nil
}

// k8sScript answers as the Kubernetes tests need: Bash and a question for
// the approvals, a held answer for `stop` and deletion mid-turn, recall.
// A held answer is told on slow (when not nil) once the model has it.
func k8sScript(hold <-chan struct{}, slow chan<- struct{}) fakeanthropic.Script {
	return func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("tool said: " + trs[0].Content)}}
		}
		text := req.LastUserText()
		if i := strings.LastIndex(text, "\n"); i >= 0 {
			text = text[i+1:]
		}
		switch {
		case strings.HasPrefix(text, "run "):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": strings.TrimPrefix(text, "run "), "description": "as asked"})}}
		case text == "ask":
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("AskUserQuestion", map[string]any{"questions": []map[string]any{{
				"question": "Which color?", "header": "Color", "multiSelect": false,
				"options": []map[string]string{{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "calm"}},
			}}})}}
		case strings.HasPrefix(text, "slow"):
			if slow != nil {
				select {
				case slow <- struct{}{}:
				default:
				}
			}
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("slow answer that goes on and on")}, Hold: hold, ChunkSize: 8}
		case text == "recall":
			if strings.Contains(req.Transcript(), "pineapple") {
				return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I remember pineapple")}}
			}
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I remember nothing")}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted: " + text)}}
	}
}

// TestKubernetesConversation: a thread's session in a Pod, with the real
// CLI: turns over several messages, an approval (the command runs in the
// Pod and its file is on the claim, as the bot's user), a question,
// `stop`; the bot restarted after kill -9 deletes the Pod it left and
// resumes the thread in a new Pod with its context; a Pod deleted
// mid-turn is told as a crash and the next message resumes. The Pod's
// spec never holds the bot's own model key: the model API sees the
// Secret's.
func TestKubernetesConversation(t *testing.T) {
	hold, slow := make(chan struct{}), make(chan struct{}, 1)
	b := newKubeBed(t, k8sScript(hold, slow))
	bot := b.start(t)
	bot.say("note pineapple")
	bot.expect(`^\[main\] claude: noted: note pineapple$`)
	first := b.waitPods(t, 1)[0]

	bot.say("run touch from-the-pod.txt")
	id := bot.expect(`^\[main\] \? approval (\w+): Bash`)[1]
	bot.say("allow")
	bot.expect(`^\[main\] ! approval ` + id + `: Allowed by operator$`)
	bot.expect(`^\[main\] claude: tool said: `)
	fi, err := os.Stat(filepath.Join(b.claim, "default", "from-the-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != botUID {
		t.Errorf("the Pod's file is uid %d's", uid)
	}

	bot.say("ask")
	qid := bot.expect(`^\[main\] \? question (\w+): \[Color\] Which color\?$`)[1]
	bot.say("2")
	bot.expect(`! question ` + qid + `: Answered by operator: Blue$`)
	bot.expect(`claude: tool said: .*Blue`)

	bot.say("slow one")
	awaitSlow(t, slow)
	bot.say("stop")
	bot.expect(`— ■ Stopped`)

	// kill -9: nothing ends the Pod but the next run of the bot.
	if err := bot.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-bot.done
	_ = bot.cmd.Wait()
	bot = b.start(t)
	bot.waitLog("claude CLI in the image") // after the probe's Pod is gone
	if !strings.Contains(strings.Join(bot.logLines(), "\n"), "removed_leftovers=1") {
		t.Error("the restarted bot did not say it removed the Pod left behind")
	}
	if p := b.pods(t); len(p) != 0 {
		t.Errorf("%d Pods after the restart, before any message", len(p))
	}
	bot.say("recall")
	bot.expect(`^\[main\] claude: I remember pineapple$`)
	second := b.waitPods(t, 1)[0]
	if second.Name == first.Name {
		t.Errorf("the resumed session is in the old Pod %s", first.Name)
	}
	for _, e := range second.Spec.Containers[0].Env {
		if strings.Contains(e.Value, "sk-bot-own") {
			t.Errorf("the Pod's env %s holds the bot's own key", e.Name)
		}
	}

	// Deleted mid-turn by someone else: told as a crash; the next
	// message resumes with the context.
	bot.say("slow two")
	awaitSlow(t, slow)
	if err := b.c.Client().CoreV1().Pods(b.ns).Delete(context.Background(), second.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	bot.expect(`Claude Code stopped unexpectedly \(its Pod was deleted\)`)
	close(hold)
	bot.say("recall")
	bot.expect(`^\[main\] claude: I remember pineapple$`)
	if err := bot.endInput(2 * time.Minute); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	b.waitPods(t, 0)
}

// awaitSlow waits until the model is answering a held turn.
func awaitSlow(t *testing.T, slow <-chan struct{}) {
	t.Helper()
	select {
	case <-slow:
	case <-time.After(2 * time.Minute):
		t.Fatal("the model was not asked the slow turn")
	}
}

// TestKubernetesMoreThreadsThanSessions: CLAUDEOPS_MAX_SESSIONS counts
// Pods. Four threads at once with room for two: every one is answered,
// and the API server never held more than two of the bot's Pods.
func TestKubernetesMoreThreadsThanSessions(t *testing.T) {
	b := newKubeBed(t, k8sScript(nil, nil), "CLAUDEOPS_MAX_SESSIONS=2")
	var mu sync.Mutex
	most := 0
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			l, err := b.c.Client().CoreV1().Pods(b.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "claudeops.io/instance=e2e"})
			if err == nil {
				mu.Lock()
				most = max(most, len(l.Items))
				mu.Unlock()
			}
		}
	}()
	bot := b.start(t)
	threads := []string{"t1", "t2", "t3", "t4"}
	for _, th := range threads {
		bot.say("/thread " + th)
		bot.say("hello from " + th)
	}
	seen := map[string]bool{}
	for range threads {
		m := bot.expect(`^\[(t\d)\] claude: noted: hello from (t\d)$`)
		if m[1] != m[2] {
			t.Errorf("thread %s got %s's answer", m[1], m[2])
		}
		seen[m[1]] = true
	}
	if len(seen) != len(threads) {
		t.Errorf("answered %v", seen)
	}
	if err := bot.endInput(2 * time.Minute); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	b.waitPods(t, 0)
	close(stop)
	<-watched
	mu.Lock()
	defer mu.Unlock()
	if most > 2 {
		t.Errorf("%d Pods at once, with CLAUDEOPS_MAX_SESSIONS=2", most)
	}
}

// TestKubernetesTurnLimit: the turn clock works as with a local process: a
// turn past CLAUDEOPS_TURN_TIMEOUT is stopped and told, and the session
// (its Pod) stays for the next message.
func TestKubernetesTurnLimit(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	// The program takes no clock from the test: the limit is the wall
	// clock's, counted from the message handed to claude. It is long enough
	// for a Pod's CLI to start on a loaded machine (a CLI still starting at
	// the limit is closed, its Pod with it, which is not what this test
	// holds), and for the next turn to be answered within it.
	b := newKubeBed(t, k8sScript(hold, nil), "CLAUDEOPS_TURN_TIMEOUT=15s")
	bot := b.start(t)
	bot.say("slow one") // hangs on the model until the limit
	bot.expect(`Stopped: the turn ran longer than 15s \(CLAUDEOPS_TURN_TIMEOUT\)\.`)
	pod := b.waitPods(t, 1)[0].Name
	bot.say("still there?")
	bot.expect(`^\[main\] claude: noted: still there\?$`)
	if now := b.waitPods(t, 1)[0].Name; now != pod {
		t.Errorf("the session moved from Pod %s to %s", pod, now)
	}
	if err := bot.endInput(2 * time.Minute); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	b.waitPods(t, 0)
}

// TestKubernetesHomesAreNoWorkdir: every thread's CLI state lies on the
// claim beside the working directories; no channel may work in it, around
// it, or through a link into it. The oracle for what a session got is the
// Pod the API server holds: its working directory's subPath.
func TestKubernetesHomesAreNoWorkdir(t *testing.T) {
	b := newKubeBed(t, k8sScript(nil, nil))
	link := filepath.Join(b.claim, "default", "homes-link")
	if err := os.Symlink("../claude-homes", link); err != nil {
		t.Fatal(err)
	}
	bot := b.start(t)
	bot.say("hello") // the thread's CLI state exists from now on
	bot.expect(`^\[main\] claude: noted: hello$`)
	for _, dir := range []string{filepath.Join(b.claim, "claude-homes", "e2e"), b.claim, link, filepath.Join(link, "e2e")} {
		bot.say("cwd " + dir)
		bot.expect(`^\[main\] \* Refused: .*(holds|lies inside) the bot's own state`)
	}
	bot.say("new")
	bot.say("hello again") // a new session, in a new Pod
	bot.expect(`^\[main\] claude: noted: hello again$`)
	for _, m := range b.waitPods(t, 1)[0].Spec.Containers[0].VolumeMounts {
		if m.Name == "work" && m.MountPath != "/home/claude/.claude" && m.SubPath != "default" {
			t.Errorf("the session mounts %q of the claim as %s", m.SubPath, m.MountPath)
		}
	}
	if err := bot.endInput(2 * time.Minute); err != nil {
		t.Errorf("bot exit: %v", err)
	}
}

// TestKubernetesWaitingForCapacity: sessions whose Pods no node has room
// for. The bot starts (its CLI check asks for next to nothing); a message
// is told that its Pod waits for capacity, in the scheduler's words, then
// that the start was given up; no Pod is left.
func TestKubernetesWaitingForCapacity(t *testing.T) {
	b := newKubeBed(t, k8sScript(nil, nil), "CLAUDEOPS_KUBERNETES_CPU_REQUEST=4096", "CLAUDEOPS_RUNNER_CPUS=4096",
		"CLAUDEOPS_KUBERNETES_START_TIMEOUT=6s")
	bot := b.start(t)
	bot.say("hello")
	bot.expect(`^\[main\] \* Waiting for capacity in the cluster: 0/1 nodes are available: .*Insufficient cpu`)
	bot.expect(`^\[main\] \* Could not start Claude Code: its Pod did not run within 6s, given up`)
	b.waitPods(t, 0)
	if err := bot.endInput(time.Minute); err != nil {
		t.Errorf("bot exit: %v", err)
	}
}

// vmRSS is a process's resident and peak memory, as its status says.
func vmRSS(t *testing.T, pid int) string {
	t.Helper()
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "VmHWM") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}

// TestKubernetesLoad holds CLAUDEOPS_LOAD_PODS sessions (20 when set to 1)
// in Pods at once and reports the bot's memory: the figure in
// docs/PERFORMANCE.md. A load script, not part of the suite:
//
//	scripts/kubernetes >cluster.env   # the cluster scripts/test would start
//	env $(cat cluster.env) CLAUDEOPS_LOAD_PODS=20 go test -tags goolm -count=1 \
//	    -run TestKubernetesLoad -v ./cmd/claudeops/
//
// (without -race, which scripts/test adds: it multiplies a Go process's
// memory).
func TestKubernetesLoad(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CLAUDEOPS_LOAD_PODS"))
	if n <= 0 {
		t.Skip("a load script: set CLAUDEOPS_LOAD_PODS to the number of sessions")
	}
	b := newKubeBed(t, k8sScript(nil, nil), "CLAUDEOPS_MAX_SESSIONS="+strconv.Itoa(n),
		"CLAUDEOPS_KUBERNETES_CPU_REQUEST=10m", "CLAUDEOPS_KUBERNETES_MEMORY_REQUEST=64Mi")
	bot := b.start(t)
	bot.waitLog("claude CLI in the image")
	t.Logf("bot ready, no session: %s", vmRSS(t, bot.cmd.Process.Pid))
	began := time.Now()
	for i := range n {
		bot.say("/thread t" + strconv.Itoa(i))
		bot.say("hello " + strconv.Itoa(i))
	}
	for range n {
		bot.expect(`^\[t\d+\] claude: noted: hello \d+$`)
	}
	took := time.Since(began)
	pods := b.waitPods(t, n)
	t.Logf("bot with %d sessions in Pods: %s", len(pods), vmRSS(t, bot.cmd.Process.Pid))
	t.Logf("%d threads answered, each in a new Pod, in %s", n, took.Round(time.Millisecond))
	if err := bot.endInput(3 * time.Minute); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	b.waitPods(t, 0)
}
