package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	units "github.com/docker/go-units"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/claudeproc/kubernetes"
	"github.com/claudeops/claudeops/internal/fspath"
)

// kubernetesConfig is the kubernetes runner's (claudeproc/kubernetes): a
// Pod per session. The image, limits and user are the CLAUDEOPS_RUNNER_*
// settings the docker runner reads too.
type kubernetesConfig struct {
	// Kubeconfig reaches the cluster; "" is the in-cluster configuration
	// (the bot's own ServiceAccount).
	Kubeconfig string `env:"CLAUDEOPS_KUBERNETES_KUBECONFIG"`
	// Namespace holds the sessions' Pods; "" is the bot's own (in-cluster).
	Namespace     string        `env:"CLAUDEOPS_KUBERNETES_NAMESPACE"`
	Instance      string        `env:"CLAUDEOPS_KUBERNETES_INSTANCE"`
	Claim         string        `env:"CLAUDEOPS_KUBERNETES_CLAIM"`
	ClaimPath     string        `env:"CLAUDEOPS_KUBERNETES_CLAIM_PATH"`
	Secret        string        `env:"CLAUDEOPS_KUBERNETES_SECRET"`
	CPURequest    string        `env:"CLAUDEOPS_KUBERNETES_CPU_REQUEST" envDefault:"500m"`
	MemoryRequest string        `env:"CLAUDEOPS_KUBERNETES_MEMORY_REQUEST" envDefault:"512Mi"`
	HostNetwork   bool          `env:"CLAUDEOPS_KUBERNETES_HOST_NETWORK"`
	StartTimeout  time.Duration `env:"CLAUDEOPS_KUBERNETES_START_TIMEOUT" envDefault:"5m"`
	// PlainEnv names variables passed with CLAUDEOPS_CLAUDE_ENV that look
	// like credentials but are not: the operator's word that they may be
	// in a Pod's spec.
	PlainEnv []string `env:"CLAUDEOPS_KUBERNETES_PLAIN_ENV"`
}

// inClusterNamespace is where a Pod's ServiceAccount names its namespace.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// kubernetesFields names each of kubernetes.Config's complaints' fields as
// the variable an operator sets.
var kubernetesFields = map[string]string{
	"namespace": "CLAUDEOPS_KUBERNETES_NAMESPACE", "image": "CLAUDEOPS_RUNNER_IMAGE",
	"instance": "CLAUDEOPS_KUBERNETES_INSTANCE", "user": "CLAUDEOPS_RUNNER_USER",
	"claim": "CLAUDEOPS_KUBERNETES_CLAIM", "claim_path": "CLAUDEOPS_KUBERNETES_CLAIM_PATH",
	"secret": "CLAUDEOPS_KUBERNETES_SECRET", "memory_request": "CLAUDEOPS_KUBERNETES_MEMORY_REQUEST",
	"cpu_request": "CLAUDEOPS_KUBERNETES_CPU_REQUEST", "start_timeout": "CLAUDEOPS_KUBERNETES_START_TIMEOUT",
}

// kubernetesConfig returns the runner's configuration for a bot whose state is
// at statePath (the default instance's name is derived from it), and what
// is wrong with it, all at once.
func (r runnerConfig) kubernetesConfig(statePath string) (kubernetes.Config, []string) {
	k, d := r.Kubernetes, r.Docker
	var bad []string
	c := kubernetes.Config{
		Namespace: k.Namespace, Image: d.Image, Instance: k.Instance, WorkClaim: k.Claim,
		WorkPath: k.ClaimPath, Secret: k.Secret, HostNetwork: k.HostNetwork, StartTimeout: k.StartTimeout,
		PlainEnv: k.PlainEnv,
	}
	if c.Namespace == "" {
		if b, err := os.ReadFile(inClusterNamespace); err == nil {
			c.Namespace = strings.TrimSpace(string(b))
		}
	}
	if c.Instance == "" {
		c.Instance = dockerInstance(statePath)
	}
	quantity := func(name, v string, q *resource.Quantity) {
		p, err := resource.ParseQuantity(v)
		if err != nil || p.Sign() < 0 {
			bad = append(bad, fmt.Sprintf("%s %q: want a quantity such as 500m or 512Mi", name, v))
			return
		}
		*q = p
	}
	quantity("CLAUDEOPS_KUBERNETES_CPU_REQUEST", k.CPURequest, &c.CPURequest)
	quantity("CLAUDEOPS_KUBERNETES_MEMORY_REQUEST", k.MemoryRequest, &c.MemoryRequest)
	if mem, err := units.RAMInBytes(d.Memory); err != nil || mem < 64<<20 {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_RUNNER_MEMORY %q: want a size such as 2g or 512m, at least 64m", d.Memory))
	} else {
		c.MemoryLimit = *resource.NewQuantity(mem, resource.BinarySI)
	}
	if d.CPUs <= 0 {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_RUNNER_CPUS %g: want more than 0", d.CPUs))
	} else {
		c.CPULimit = *resource.NewMilliQuantity(int64(d.CPUs*1000), resource.DecimalSI)
	}
	c.UID, c.GID = int64(os.Getuid()), int64(os.Getgid())
	if d.User != "" {
		m := userRe.FindStringSubmatch(d.User)
		if m == nil {
			bad = append(bad, fmt.Sprintf("CLAUDEOPS_RUNNER_USER %q: want uid:gid, numbers", d.User))
		} else {
			c.UID, _ = strconv.ParseInt(m[1], 10, 64)
			c.GID, _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	for _, msg := range c.Check() {
		field, rest, _ := strings.Cut(msg, " ")
		if name, ok := kubernetesFields[field]; ok {
			msg = name + " " + rest
		}
		if field == "user" && d.User == "" {
			msg += "; the bot runs as root: set CLAUDEOPS_RUNNER_USER"
		}
		bad = append(bad, msg)
	}
	return c, bad
}

// kubernetesCredentials refuses, for the kubernetes runner, a variable
// passed with CLAUDEOPS_CLAUDE_ENV that looks like a credential
// (kubernetes.Credential): a Pod's spec is readable by whoever may read
// Pods, so it would be left out of the session's environment without a
// word. The operator puts it in the Secret, or says it is none. m is the
// environment; names only are shown, never values.
func kubernetesCredentials(c config, m map[string]string) []problem {
	if c.Runner.Kind != "kubernetes" {
		return nil
	}
	var names []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if !namedIn(name, c.ClaudeEnv) || slices.Contains(c.Runner.Kubernetes.PlainEnv, name) {
			continue
		}
		if kubernetes.Credential(name, m[name]) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return []problem{{name: "CLAUDEOPS_CLAUDE_ENV", want: fmt.Sprintf(
		"passes %s, which looks like a credential, and a Pod's spec is readable by whoever may read Pods: "+
			"put it in the Secret CLAUDEOPS_KUBERNETES_SECRET names, or list it in CLAUDEOPS_KUBERNETES_PLAIN_ENV if it is not one",
		strings.Join(names, ", "))}}
}

// namedIn reports whether name is one of names or starts with a prefix
// of them ending in "*", as CLAUDEOPS_CLAUDE_ENV reads.
func namedIn(name string, names []string) bool {
	for _, n := range names {
		n = strings.TrimSpace(n)
		if p, ok := strings.CutSuffix(n, "*"); ok && p != "" && strings.HasPrefix(name, p) || n == name {
			return true
		}
	}
	return false
}

// kubernetesPlaces checks that the claim holds the directories sessions
// work in (the default working directory, the repositories' worktrees),
// below its root and apart from the CLI's state.
func kubernetesPlaces(c config) []problem {
	claim := c.Runner.Kubernetes.ClaimPath
	if c.Runner.Kind != "kubernetes" || !filepath.IsAbs(claim) || filepath.Clean(claim) == "/" {
		return nil // runnerConfig.validate says what is wrong with it
	}
	claim = filepath.Clean(claim)
	homes := filepath.Join(claim, kubernetes.HomesDir)
	dirs := map[string]string{"CLAUDEOPS_WORKDIR": c.Workdir}
	if c.Workspaces != "" {
		dirs["CLAUDEOPS_WORKSPACES"] = c.Workspaces
	}
	var out []problem
	for _, name := range slices.Sorted(maps.Keys(dirs)) {
		w := absPath(dirs[name])
		if !fspath.Within(w, claim) || w == claim || fspath.Within(homes, w) || fspath.Within(w, homes) {
			out = append(out, problem{name: name, value: dirs[name], want: fmt.Sprintf(
				"want a directory below CLAUDEOPS_KUBERNETES_CLAIM_PATH %s (sessions' Pods reach it through the claim), apart from %s", claim, homes)})
		}
	}
	return out
}

// kubernetesOwnDirs are the runner's directories on the claim that no
// session may work in or be granted: every thread's CLI state.
func kubernetesOwnDirs(c config) []string {
	if c.Runner.Kind != "kubernetes" || !filepath.IsAbs(c.Runner.Kubernetes.ClaimPath) {
		return nil
	}
	return []string{filepath.Join(filepath.Clean(c.Runner.Kubernetes.ClaimPath), kubernetes.HomesDir)}
}

// kubernetesRunner makes the kubernetes runner and checks the cluster
// before the bot takes any message; Pods a previous run left are deleted.
func kubernetesRunner(ctx context.Context, cfg config, log *slog.Logger) (*kubernetes.Runner, claudeproc.VersionInfo, error) {
	var cli claudeproc.VersionInfo
	kc, bad := cfg.Runner.kubernetesConfig(absPath(statePlace(cfg)))
	if len(bad) > 0 {
		return nil, cli, fmt.Errorf("kubernetes runner: %s", strings.Join(bad, "; "))
	}
	kc.Logger = log
	// client-go reports what it cannot hand back (a stream's copy that
	// failed) through klog: into the bot's log, not stderr as text.
	klog.SetSlogLogger(log.With("part", "client-go"))
	rc, err := restConfig(cfg.Runner.Kubernetes.Kubeconfig)
	if err != nil {
		return nil, cli, fmt.Errorf("kubernetes runner: %w", err)
	}
	r, err := kubernetes.New(kc, rc)
	if err != nil {
		return nil, cli, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := r.Prepare(ctx); err != nil {
		return nil, cli, fmt.Errorf("kubernetes runner: %w", err)
	}
	if cli, err = checkImageCLI(ctx, r, cmp.Or(cfg.ClaudeBin, "claude")); err != nil {
		return nil, cli, fmt.Errorf("kubernetes runner: %w", err)
	}
	return r, cli, nil
}

// restConfig reaches the cluster: by the kubeconfig file, else as the Pod
// the bot runs in.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no CLAUDEOPS_KUBERNETES_KUBECONFIG and not in a cluster: %w", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig %s: %w", kubeconfig, err)
	}
	return rc, nil
}
