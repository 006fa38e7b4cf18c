package kubetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var (
	metaGet     = metav1.GetOptions{}
	metaCreate  = metav1.CreateOptions{}
	notDNSLabel = regexp.MustCompile(`[^a-z0-9]+`)
)

// podsGoneTimeout bounds the wait for a namespace's Pods to be torn down
// by the kubelet (containers stopped, volumes unmounted) at cleanup;
// Pods still there then are removed by force.
const podsGoneTimeout = 45 * time.Second

// Namespace makes a namespace for this test alone, as a real cluster's
// controllers would leave it: with the default ServiceAccount and the
// kube-root-ca.crt ConfigMap (what a Pod's service-account token volume
// reads). At cleanup everything in it is deleted (Pods first, waiting for
// the kubelet to tear them down, up to podsGoneTimeout), then the
// namespace itself.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	name := namespaceName(t.Name())
	ctx, cancel := stepContext()
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"claudeops.test/kubetest": "1"}}}
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, ns, metaCreate); err != nil {
		t.Fatalf("kubetest: create namespace %s: %v", name, err)
	}
	c.mu.Lock()
	c.pvs[name] = nil
	c.mu.Unlock()
	t.Cleanup(func() {
		if err := c.removeNamespace(name); err != nil {
			t.Errorf("kubetest: %v", err)
		}
	})
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := c.client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metaCreate); err != nil {
		t.Fatalf("kubetest: create the default ServiceAccount in %s: %v", name, err)
	}
	ca := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"},
		Data: map[string]string{"ca.crt": string(c.config.CAData)}}
	if _, err := c.client.CoreV1().ConfigMaps(name).Create(ctx, ca, metaCreate); err != nil {
		t.Fatalf("kubetest: create kube-root-ca.crt in %s: %v", name, err)
	}
	return name
}

// namespaceName is a DNS label from the test's name, unique.
func namespaceName(test string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	base := strings.Trim(notDNSLabel.ReplaceAllString(strings.ToLower(test), "-"), "-")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-")
	}
	return "kt-" + base + "-" + hex.EncodeToString(b)
}

// removeNamespace does what the namespace controller would: the Pods go
// first, through the kubelet, then every other namespaced object, the
// claims' volumes, and the namespace.
func (c *Cluster) removeNamespace(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Deleting the namespace first stops anything new being made in it.
	if err := c.client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	var errs []error
	if err := c.removePods(ctx, name); err != nil {
		errs = append(errs, err)
	}
	if err := c.removeContents(ctx, name); err != nil {
		errs = append(errs, err)
	}
	c.mu.Lock()
	pvs := c.pvs[name]
	delete(c.pvs, name)
	c.mu.Unlock()
	for _, pv := range pvs {
		if err := c.client.CoreV1().PersistentVolumes().Delete(ctx, pv, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete PersistentVolume %s: %w", pv, err))
		}
	}
	// With no controller to empty the namespace's finalizers, they are
	// emptied here: the namespace then goes.
	ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metaGet)
	if err == nil {
		ns.Spec.Finalizers = nil
		_, err = c.client.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("finalize namespace %s: %w", name, err))
	}
	return errors.Join(errs...)
}

// removePods deletes the namespace's Pods with a short grace period and
// waits for the kubelet to confirm each; what is left after
// podsGoneTimeout is deleted by force.
func (c *Cluster) removePods(ctx context.Context, ns string) error {
	pods := c.client.CoreV1().Pods(ns)
	grace := int64(1)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("delete the Pods of %s: %w", ns, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, podsGoneTimeout, true, func(ctx context.Context) (bool, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, nil
	})
	if err == nil {
		return nil
	}
	now := int64(0)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &now}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("force-delete the Pods of %s: %w", ns, err)
	}
	return fmt.Errorf("the Pods of %s were not gone %v after their deletion: deleted by force", ns, podsGoneTimeout)
}

// removeContents deletes every other namespaced object of ns, of every
// resource the API server serves that can be deleted by collection.
func (c *Cluster) removeContents(ctx context.Context, ns string) error {
	lists, err := c.client.Discovery().ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return fmt.Errorf("discover the resources to empty %s of: %w", ns, err)
	}
	cfg := rest.CopyConfig(c.config)
	cfg.WarningHandler = rest.NoWarnings{} // deprecated kinds, emptied all the same
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	var errs []error
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if r.Name == "pods" || !slices.Contains(r.Verbs, "deletecollection") {
				continue
			}
			res := dyn.Resource(gv.WithResource(r.Name)).Namespace(ns)
			if err := res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil &&
				!apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
				errs = append(errs, fmt.Errorf("delete the %s of %s: %w", r.Name, ns, err))
			}
		}
	}
	return errors.Join(errs...)
}
