package kubernetes_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	// client-go 0.37 reports a failed upgrade with this package's error
	// type, not apimachinery's (k8s.io/apimachinery/pkg/util/httpstream).
	"k8s.io/streaming/pkg/httpstream"

	"github.com/claudeops/claudeops/claudeproc/kubernetes"
	"github.com/claudeops/claudeops/internal/kubetest"
)

// podUser is who the test Pods run as: the session image's user.
const podUser = 1000

// applyRBAC makes the manifests' ServiceAccount, Role and RoleBinding in
// ns, as they are but for the namespace, and returns a client
// configuration acting as that ServiceAccount (a token from the
// TokenRequest API, as the bot's Pod is given).
func applyRBAC(t *testing.T, c *kubetest.Cluster, ns string) *rest.Config {
	t.Helper()
	ms := loadAll(t)
	sa := only[*corev1.ServiceAccount](t, ms, nil).DeepCopy()
	role := only[*rbacv1.Role](t, ms, nil).DeepCopy()
	rb := only[*rbacv1.RoleBinding](t, ms, nil).DeepCopy()
	sa.Namespace, role.Namespace, rb.Namespace = ns, ns, ns
	for i := range rb.Subjects {
		rb.Subjects[i].Namespace = ns
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := c.Client()
	create := metav1.CreateOptions{}
	if _, err := adm.CoreV1().ServiceAccounts(ns).Create(ctx, sa, create); err != nil {
		t.Fatalf("create %s: %v", sa.Name, err)
	}
	if _, err := adm.RbacV1().Roles(ns).Create(ctx, role, create); err != nil {
		t.Fatalf("create %s: %v", role.Name, err)
	}
	if _, err := adm.RbacV1().RoleBindings(ns).Create(ctx, rb, create); err != nil {
		t.Fatalf("create %s: %v", rb.Name, err)
	}
	secs := int64(3600)
	tr, err := adm.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &secs}}, create)
	if err != nil {
		t.Fatalf("a token for %s: %v", sa.Name, err)
	}
	admCfg := c.RESTConfig()
	return &rest.Config{
		Host:            admCfg.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: admCfg.CAData, CAFile: admCfg.CAFile, ServerName: admCfg.ServerName},
		BearerToken:     tr.Status.Token,
	}
}

// may asks the API server, as cli's user, whether it may do ra.
func may(t *testing.T, cli k8s.Interface, ra authv1.ResourceAttributes) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rev, err := cli.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
		&authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectAccessReview of %+v: %v", ra, err)
	}
	return rev.Status.Allowed
}

// TestRBACOnACluster applies the ServiceAccount, Role and RoleBinding to a
// real cluster and asks, as that ServiceAccount, what it may do: exactly
// the runner's verbs on Pods of its namespace, nothing else. That it may
// ask at all shows that SelfSubjectAccessReview needs no grant.
func TestRBACOnACluster(t *testing.T) {
	c := kubetest.Require(t)
	ns := c.Namespace(t)
	cli, err := k8s.NewForConfig(applyRBAC(t, c, ns))
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range runnerVerbs() {
		resource, verb, _ := strings.Cut(pair, " ")
		res, sub, _ := strings.Cut(resource, "/")
		if !may(t, cli, authv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: res, Subresource: sub}) {
			t.Errorf("the ServiceAccount may not %s in its namespace", pair)
		}
	}
	denied := []authv1.ResourceAttributes{
		{Namespace: ns, Verb: "get", Resource: "secrets"},
		{Namespace: ns, Verb: "list", Resource: "secrets"},
		{Namespace: ns, Verb: "create", Resource: "pods", Subresource: "exec"},
		{Namespace: ns, Verb: "get", Resource: "pods", Subresource: "exec"},
		{Namespace: ns, Verb: "create", Resource: "pods", Subresource: "portforward"},
		{Namespace: ns, Verb: "get", Resource: "pods", Subresource: "log"},
		{Namespace: ns, Verb: "create", Resource: "pods", Subresource: "eviction"},
		{Namespace: ns, Verb: "update", Resource: "pods"},
		{Namespace: ns, Verb: "patch", Resource: "pods"},
		{Namespace: ns, Verb: "deletecollection", Resource: "pods"},
		{Namespace: ns, Verb: "get", Resource: "configmaps"},
		{Namespace: ns, Verb: "create", Resource: "serviceaccounts", Subresource: "token"},
		{Namespace: ns, Verb: "create", Resource: "deployments", Group: "apps"},
		{Namespace: ns, Verb: "create", Resource: "roles", Group: "rbac.authorization.k8s.io"},
		{Namespace: "default", Verb: "create", Resource: "pods"},
		{Namespace: "default", Verb: "list", Resource: "pods"},
		{Verb: "list", Resource: "pods"}, // every namespace
		{Verb: "get", Resource: "nodes"},
	}
	for _, ra := range denied {
		if may(t, cli, ra) {
			t.Errorf("the ServiceAccount may %+v", ra)
		}
	}
}

// TestRoleRunsTheRunner runs the kubernetes runner as the ServiceAccount
// with nothing but the Role: its start-up checks (the verbs it needs) and
// the removal of leftovers pass, and a Pod it makes, admitted at
// namespace.yaml's Pod Security level, runs the image's CLI and is
// attached to. This ties the Role to the runner's own list.
func TestRoleRunsTheRunner(t *testing.T) {
	c := kubetest.Require(t)
	ns := c.Namespace(t)
	restrict(t, c, ns) // the session's Pod too must meet namespace.yaml's level
	claim := t.TempDir()
	c.HostPathClaim(t, ns, "work", claim)
	r, err := kubernetes.New(kubernetes.Config{
		Namespace: ns, Image: c.Image, Instance: "rbac", UID: podUser, GID: podUser,
		WorkClaim: "work", WorkPath: claim, StartTimeout: 3 * time.Minute,
	}, applyRBAC(t, c, ns))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := r.Prepare(ctx); err != nil {
		t.Fatalf("Prepare with the manifests' Role: %v", err)
	}
	v, err := r.CLIVersion(ctx, "claude")
	if err != nil {
		t.Fatalf("claude --version in a Pod, with the manifests' Role: %v", err)
	}
	if !strings.Contains(v, "Claude Code") {
		t.Errorf("claude --version printed %q", v)
	}
}

// TestWebSocketAttachNeedsGet shows why the Role grants "get" on
// pods/attach: the WebSocket attach client-go's executor makes is a GET,
// authorized as "get" (and then, since 1.35, "create"). A Role without it
// is refused the WebSocket and left to SPDY; the manifests' Role is not.
func TestWebSocketAttachNeedsGet(t *testing.T) {
	c := kubetest.Require(t)
	ns := c.Namespace(t)
	pod := echoPod(t, c, ns)

	var without []rbacv1.PolicyRule
	for _, r := range only[*rbacv1.Role](t, loadAll(t), nil).Rules {
		r := *r.DeepCopy()
		if slices.Contains(r.Resources, "pods/attach") {
			r.Verbs = slices.DeleteFunc(r.Verbs, func(v string) bool { return v == "get" })
		}
		without = append(without, r)
	}
	kc := c.ServiceAccountKubeconfig(t, ns, without)
	noGet, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = wsAttach(t, noGet, ns, pod, "refused\n")
	var up *httpstream.UpgradeFailureError
	if !errors.As(err, &up) || !apierrors.IsForbidden(up.Cause) {
		t.Fatalf("a WebSocket attach without get on pods/attach: %v, want it forbidden", err)
	}

	out, err := wsAttach(t, applyRBAC(t, c, ns), ns, pod, "ping\n")
	if err != nil {
		t.Fatalf("a WebSocket attach with the manifests' Role: %v", err)
	}
	if !strings.Contains(out, "got:ping") {
		t.Errorf("the Pod answered %q, want got:ping", out)
	}
}

// echoPod starts a Pod that reads one line and echoes it, and waits until
// it runs.
func echoPod(t *testing.T, c *kubetest.Cluster, ns string) string {
	t.Helper()
	yes, no, uid := true, false, int64(podUser)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, HostNetwork: true, AutomountServiceAccountToken: &no,
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &uid},
			Containers: []corev1.Container{{
				Name: "echo", Image: c.Image, ImagePullPolicy: corev1.PullNever,
				Command: []string{"/bin/sh", "-c", "IFS= read -r l; echo got:$l"},
				Stdin:   true, StdinOnce: true,
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pods := c.Client().CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the echo Pod: %v", err)
	}
	var phase corev1.PodPhase
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase = p.Status.Phase
		return phase != corev1.PodPending, nil
	})
	if err != nil || phase != corev1.PodRunning {
		t.Fatalf("the echo Pod: %v, phase %s", err, phase)
	}
	return pod.Name
}

// wsAttach attaches to the Pod's stdin and stdout over WebSocket alone (no
// SPDY fallback), writes in and returns what the Pod wrote.
func wsAttach(t *testing.T, cfg *rest.Config, ns, pod, in string) (string, error) {
	t.Helper()
	cli, err := k8s.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := cli.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: "echo", Stdin: true, Stdout: true}, scheme.ParameterCodec)
	exec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader(in), Stdout: &out})
	return out.String(), err
}
