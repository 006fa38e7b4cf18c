package kubernetes_test

import (
	"context"
	"maps"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claudeops/claudeops/internal/kubetest"
)

// restrict gives the test's namespace the Pod Security labels of
// namespace.yaml, so that the API server admits there only what it would
// admit in the manifests' namespace.
func restrict(t *testing.T, c *kubetest.Cluster, ns string) {
	t.Helper()
	want := only[*corev1.Namespace](t, loadAll(t), nil).Labels
	if len(want) == 0 {
		t.Fatal("namespace.yaml sets no Pod Security labels")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nss := c.Client().CoreV1().Namespaces()
	got, err := nss.Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	maps.Copy(got.Labels, want)
	if _, err := nss.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("label namespace %s: %v", ns, err)
	}
}

// TestManifestsAdmitted has the API server itself check every manifest
// (server-side dry run: its validation and admission) in a namespace
// labelled as namespace.yaml labels its own, and the bot's Pod as the
// Deployment would make it: the "restricted" Pod Security level admits it.
func TestManifestsAdmitted(t *testing.T) {
	c := kubetest.Require(t)
	ns := c.Namespace(t)
	restrict(t, c, ns)
	applyRBAC(t, c, ns) // for real: the Pod's admission looks its ServiceAccount up
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli := c.Client()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, m := range loadAll(t) {
		var err error
		switch o := m.obj.DeepCopyObject().(type) {
		case *corev1.Namespace:
			_, err = cli.CoreV1().Namespaces().Create(ctx, o, dry)
		case *corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding:
			continue // made by applyRBAC
		case *corev1.PersistentVolumeClaim:
			o.Namespace = ns
			_, err = cli.CoreV1().PersistentVolumeClaims(ns).Create(ctx, o, dry)
		case *corev1.Secret:
			o.Namespace = ns
			_, err = cli.CoreV1().Secrets(ns).Create(ctx, o, dry)
		case *appsv1.Deployment:
			o.Namespace = ns
			if _, err = cli.AppsV1().Deployments(ns).Create(ctx, o, dry); err != nil {
				break
			}
			pod := &corev1.Pod{ObjectMeta: o.Spec.Template.ObjectMeta, Spec: o.Spec.Template.Spec}
			pod.Name, pod.Namespace = "bot", ns
			if _, err := cli.CoreV1().Pods(ns).Create(ctx, pod, dry); err != nil {
				t.Errorf("%s: the bot's Pod is not admitted: %v", m.file, err)
			}
		default:
			t.Errorf("%s: no dry run for a %T", m.file, o)
			continue
		}
		if err != nil {
			t.Errorf("%s: the API server refuses it: %v", m.file, err)
		}
	}
}
