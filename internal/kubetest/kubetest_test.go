package kubetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// These tests run Pods on the real cluster scripts/test starts
// (scripts/kubernetes): the session image, attach, a claim, a
// ServiceAccount's rights, the scheduler.

const podTimeout = 90 * time.Second

func TestAbsent(t *testing.T) {
	full := map[string]string{"CLAUDEOPS_TEST_KUBECONFIG": "/k", "CLAUDEOPS_TEST_KUBE_IMAGE": "i:1", "CLAUDEOPS_TEST_KUBE_NODE": "n"}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		why   string // a part of it; "" for none
		fatal bool
	}{
		{"all set", full, "", false},
		{"none set", nil, "CLAUDEOPS_TEST_KUBECONFIG, CLAUDEOPS_TEST_KUBE_IMAGE, CLAUDEOPS_TEST_KUBE_NODE not set", false},
		{"one missing", map[string]string{"CLAUDEOPS_TEST_KUBECONFIG": "/k", "CLAUDEOPS_TEST_KUBE_NODE": "n"},
			"CLAUDEOPS_TEST_KUBE_IMAGE not set", false},
		{"unavailable", map[string]string{"CLAUDEOPS_KUBERNETES_UNAVAILABLE": "no cgroups"}, "can run here: no cgroups", false},
		{"required", map[string]string{"CLAUDEOPS_REQUIRE_KUBERNETES": "1"}, "not set", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, fatal := absent(func(k string) string { return tc.env[k] })
			if tc.why == "" && why != "" || !strings.Contains(why, tc.why) || fatal != tc.fatal {
				t.Errorf("absent = %q, %v; want %q in it, %v", why, fatal, tc.why, tc.fatal)
			}
		})
	}
}

// sessionPod is a Pod of the session image as the runner makes them: uid
// 1000 (no passwd entry: HOME from the environment), no privileges, never
// pulled.
func sessionPod(c *Cluster, name string, cmd ...string) *corev1.Pod {
	uid, no, yes, grace := int64(1000), false, true, int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "main", Image: c.Image, ImagePullPolicy: corev1.PullNever, Command: cmd,
				Env: []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}},
				SecurityContext: &corev1.SecurityContext{RunAsUser: &uid, RunAsGroup: &uid, RunAsNonRoot: &yes,
					AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
}

// runPod creates p in ns and waits until done says so of it.
func runPod(t *testing.T, c *Cluster, ns string, p *corev1.Pod, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), podTimeout)
	defer cancel()
	if _, err := c.Client().CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", p.Name, err)
	}
	return waitPod(t, c, ns, p.Name, done)
}

// waitPod waits until done says so of Pod ns/name, failing the test when
// it fails otherwise or podTimeout passes.
func waitPod(t *testing.T, c *Cluster, ns, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), podTimeout)
	defer cancel()
	var last *corev1.Pod
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := c.Client().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // a transient error: poll again
		}
		last = got
		if got.Status.Phase == corev1.PodFailed && !done(got) {
			return false, fmt.Errorf("pod %s failed: %+v", name, got.Status.ContainerStatuses)
		}
		return done(got), nil
	})
	if err != nil {
		var status any
		if last != nil {
			status = last.Status
		}
		t.Fatalf("pod %s: %v; status: %+v", name, err, status)
	}
	return last
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return p.Status.Phase == ph }
}

// TestAttach runs `cat` in a Pod of the session image and talks to it
// through attach, over both of client-go's streaming protocols.
func TestAttach(t *testing.T) {
	c := Require(t)
	ns := c.Namespace(t)
	for _, tc := range []struct {
		name     string
		executor func(*rest.Config, *url.URL) (remotecommand.Executor, error)
	}{
		{"websocket", func(cfg *rest.Config, u *url.URL) (remotecommand.Executor, error) {
			return remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
		}},
		{"spdy", func(cfg *rest.Config, u *url.URL) (remotecommand.Executor, error) {
			return remotecommand.NewSPDYExecutor(cfg, "POST", u)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := sessionPod(c, "cat-"+tc.name, "cat")
			// As the runner's: the container's stdin ends with the
			// first attach's.
			p.Spec.Containers[0].Stdin, p.Spec.Containers[0].StdinOnce = true, true
			no := false
			p.Spec.AutomountServiceAccountToken = &no
			runPod(t, c, ns, p, phase(corev1.PodRunning))
			req := c.Client().CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(p.Name).
				SubResource("attach").VersionedParams(&corev1.PodAttachOptions{Container: "main", Stdin: true, Stdout: true}, scheme.ParameterCodec)
			ex, err := tc.executor(c.RESTConfig(), req.URL())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), podTimeout)
			defer cancel()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW})
				outW.CloseWithError(fmt.Errorf("attach ended: %v", err))
				done <- err
			}()
			out := bufio.NewReader(outR)
			for i := range 3 {
				line := fmt.Sprintf("line %d over %s\n", i, tc.name)
				if _, err := io.WriteString(inW, line); err != nil {
					t.Fatalf("write: %v", err)
				}
				got, err := out.ReadString('\n')
				if err != nil || got != line {
					t.Fatalf("read %q, %v; want %q", got, err, line)
				}
			}
			// Closing stdin ends the attach, and cat's input with it
			// (StdinOnce): cat exits, the Pod succeeds.
			inW.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("attach ended with %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the attach goes on 30 s after stdin was closed")
			}
			waitPod(t, c, ns, p.Name, phase(corev1.PodSucceeded))
		})
	}
}

// TestHostPathClaim writes through a claim's subPath in a Pod and finds
// the file in the host's directory, owned by the Pod's user; the image's
// CLI runs there as that user.
func TestHostPathClaim(t *testing.T) {
	c := Require(t)
	dir := t.TempDir() // made first, so removed after the namespace's Pods are gone
	ns := c.Namespace(t)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sub, 1000, 1000); err != nil {
		t.Fatalf("give the pod's user its directory: %v", err)
	}
	c.HostPathClaim(t, ns, "work", dir)
	p := sessionPod(c, "writer", "sh", "-c", "printf through-the-claim > /work/f && claude --version > /work/version")
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/work", SubPath: "sub"}}
	p.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "work"}}}}
	runPod(t, c, ns, p, phase(corev1.PodSucceeded))
	f := filepath.Join(sub, "f")
	b, err := os.ReadFile(f)
	if err != nil || string(b) != "through-the-claim" {
		t.Fatalf("read %s: %q, %v", f, b, err)
	}
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1000 || st.Gid != 1000 {
		t.Errorf("%s is owned by %d:%d, want 1000:1000", f, st.Uid, st.Gid)
	}
	if v, _ := os.ReadFile(filepath.Join(sub, "version")); !strings.Contains(string(v), "Claude Code") {
		t.Errorf("claude --version in the pod printed %q", v)
	}
}

// TestUnschedulablePodIsReported: the scheduler says why a Pod that fits
// no node waits.
func TestUnschedulablePodIsReported(t *testing.T) {
	c := Require(t)
	ns := c.Namespace(t)
	p := sessionPod(c, "too-big", "true")
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
	got := runPod(t, c, ns, p, func(p *corev1.Pod) bool {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				return true
			}
		}
		return false
	})
	if got.Status.Phase != corev1.PodPending || got.Spec.NodeName != "" {
		t.Errorf("unschedulable pod: phase %s on node %q", got.Status.Phase, got.Spec.NodeName)
	}
}
