package kubetest

import (
	"context"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestServiceAccountKubeconfig acts as a ServiceAccount that may only read
// Pods in its namespace: that is allowed, and nothing else is.
func TestServiceAccountKubeconfig(t *testing.T) {
	c := Require(t)
	ns := c.Namespace(t)
	path := c.ServiceAccountKubeconfig(t, ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	who, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("who am I: %v", err)
	}
	if u := who.Status.UserInfo.Username; !strings.HasPrefix(u, "system:serviceaccount:"+ns+":") {
		t.Fatalf("acting as %q, want a ServiceAccount of %s", u, ns)
	}
	if _, err := sa.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list pods in %s, as the Role allows: %v", ns, err)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"list secrets", func() error { _, err := sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); return err }},
		{"list pods elsewhere", func() error { _, err := sa.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); return err }},
		{"create a pod", func() error {
			_, err := sa.CoreV1().Pods(ns).Create(ctx, sessionPod(c, "refused", "true"), metav1.CreateOptions{})
			return err
		}},
		{"delete a pod", func() error { return sa.CoreV1().Pods(ns).Delete(ctx, "any", metav1.DeleteOptions{}) }},
		{"list nodes", func() error { _, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err }},
		{"create a service account", func() error {
			_, err := sa.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		}},
	} {
		if err := tc.call(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want forbidden", tc.name, err)
		}
	}
}
