package kubetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is the test cluster. Its methods may be called from parallel
// tests.
type Cluster struct {
	// Kubeconfig is the path of the admin's kubeconfig.
	Kubeconfig string
	// Image is the session image's reference.
	Image string
	// Node is the one node's name.
	Node string

	config *rest.Config
	client kubernetes.Interface

	mu  sync.Mutex
	pvs map[string][]string // namespace made by Namespace → its claims' volumes
}

var (
	once    sync.Once
	shared  *Cluster
	openErr error
)

// Require returns the cluster. It skips the test, saying why, where none
// was started (CLAUDEOPS_KUBERNETES_UNAVAILABLE says why no cluster can run
// here), and fails it instead when CLAUDEOPS_REQUIRE_KUBERNETES=1 (as
// scripts/test sets) or the cluster named does not answer.
func Require(t testing.TB) *Cluster {
	t.Helper()
	if why, fatal := absent(os.Getenv); why != "" {
		if fatal {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	once.Do(func() { shared, openErr = open() })
	if openErr != nil {
		t.Fatal(openErr)
	}
	return shared
}

// absent says why there is no cluster to test with ("" when the
// environment names one), and whether that fails the test.
func absent(getenv func(string) string) (why string, fatal bool) {
	var missing []string
	for _, v := range []string{"CLAUDEOPS_TEST_KUBECONFIG", "CLAUDEOPS_TEST_KUBE_IMAGE", "CLAUDEOPS_TEST_KUBE_NODE"} {
		if getenv(v) == "" {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return "", false
	}
	why = fmt.Sprintf("no Kubernetes cluster: %s not set (scripts/test starts one with scripts/kubernetes)",
		strings.Join(missing, ", "))
	if r := getenv("CLAUDEOPS_KUBERNETES_UNAVAILABLE"); r != "" {
		why = "no Kubernetes cluster can run here: " + r
	}
	return why, getenv("CLAUDEOPS_REQUIRE_KUBERNETES") == "1"
}

// open connects to the cluster the environment names and checks that its
// node is there.
func open() (*Cluster, error) {
	c := &Cluster{
		Kubeconfig: os.Getenv("CLAUDEOPS_TEST_KUBECONFIG"),
		Image:      os.Getenv("CLAUDEOPS_TEST_KUBE_IMAGE"),
		Node:       os.Getenv("CLAUDEOPS_TEST_KUBE_NODE"),
		pvs:        map[string][]string{},
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubetest: read %s: %w", c.Kubeconfig, err)
	}
	// Tests make many calls at once; the default limits (5/s) would
	// throttle them, not the API server.
	cfg.QPS, cfg.Burst = 100, 200
	if len(cfg.CAData) == 0 && cfg.CAFile != "" {
		// Namespace and ServiceAccountKubeconfig hand the CA on.
		if cfg.CAData, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("kubetest: read the cluster's CA: %w", err)
		}
	}
	c.config = cfg
	if c.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("kubetest: client for %s: %w", c.Kubeconfig, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.client.CoreV1().Nodes().Get(ctx, c.Node, metaGet); err != nil {
		return nil, fmt.Errorf("kubetest: the cluster of %s does not answer (is scripts/kubernetes's cluster running?): node %s: %w",
			c.Kubeconfig, c.Node, err)
	}
	return c, nil
}

// Client is a clientset acting as the cluster's admin.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// RESTConfig is a copy of the admin's client configuration (for
// remotecommand, say).
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.config) }

// stepContext bounds one setup or cleanup step of a test.
func stepContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}
