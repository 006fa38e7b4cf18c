package kubetest

import (
	"path/filepath"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tokenSeconds is how long a ServiceAccount's token lasts: longer than
// any test.
const tokenSeconds = 2 * 60 * 60

// ServiceAccountKubeconfig makes a ServiceAccount in ns granted exactly
// rules there (a Role and its RoleBinding), and returns the path of a
// kubeconfig acting as it, with a token from the TokenRequest API: a test
// then does only what those rules allow (the bot's Role, say). The objects
// go with the namespace; the file with the test.
func (c *Cluster) ServiceAccountKubeconfig(t testing.TB, ns string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx, cancel := stepContext()
	defer cancel()
	name := namespaceName("sa")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metaCreate); err != nil {
		t.Fatalf("kubetest: create ServiceAccount %s/%s: %v", ns, name, err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := c.client.RbacV1().Roles(ns).Create(ctx, role, metaCreate); err != nil {
		t.Fatalf("kubetest: create Role %s/%s: %v", ns, name, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := c.client.RbacV1().RoleBindings(ns).Create(ctx, binding, metaCreate); err != nil {
		t.Fatalf("kubetest: create RoleBinding %s/%s: %v", ns, name, err)
	}
	seconds := int64(tokenSeconds)
	tr, err := c.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metaCreate)
	if err != nil {
		t.Fatalf("kubetest: request a token for %s/%s: %v", ns, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.config.Host, CertificateAuthorityData: c.config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	// Written private: the token is a credential.
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatalf("kubetest: write %s: %v", path, err)
	}
	return path
}
