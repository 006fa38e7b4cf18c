package kubernetes

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	units "github.com/docker/go-units"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fspath"
)

// Settings are the kubernetes runner's configuration as the operator gives
// it (CLAUDEOPS_RUNNER=kubernetes): a Pod per session. The image, limits
// and user are the CLAUDEOPS_RUNNER_* variables the docker runner reads
// too, with the same defaults.
type Settings struct {
	Image  string  `env:"CLAUDEOPS_RUNNER_IMAGE"`
	Memory string  `env:"CLAUDEOPS_RUNNER_MEMORY" envDefault:"2g"`
	CPUs   float64 `env:"CLAUDEOPS_RUNNER_CPUS" envDefault:"2"`
	User   string  `env:"CLAUDEOPS_RUNNER_USER"`
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

// settingVars names each of Config.Check's complaints' fields as the
// variable an operator sets.
var settingVars = map[string]string{
	"namespace": "CLAUDEOPS_KUBERNETES_NAMESPACE", "image": "CLAUDEOPS_RUNNER_IMAGE",
	"instance": "CLAUDEOPS_KUBERNETES_INSTANCE", "user": "CLAUDEOPS_RUNNER_USER",
	"claim": "CLAUDEOPS_KUBERNETES_CLAIM", "claim_path": "CLAUDEOPS_KUBERNETES_CLAIM_PATH",
	"secret": "CLAUDEOPS_KUBERNETES_SECRET", "memory_request": "CLAUDEOPS_KUBERNETES_MEMORY_REQUEST",
	"cpu_request": "CLAUDEOPS_KUBERNETES_CPU_REQUEST", "start_timeout": "CLAUDEOPS_KUBERNETES_START_TIMEOUT",
}

// userRe is CLAUDEOPS_RUNNER_USER's form.
var userRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{1,10}):([0-9]{1,10})$`) })

// Name is CLAUDEOPS_RUNNER's value for it.
func (Settings) Name() string { return "kubernetes" }

// Config is the runner's configuration for the bot named instance (the
// default Instance), and what is wrong with it, all at once, each line
// naming the variable at fault.
func (s Settings) Config(instance string) (Config, []string) {
	var bad []string
	c := Config{
		Namespace: s.Namespace, Image: s.Image, Instance: cmp.Or(s.Instance, instance), WorkClaim: s.Claim,
		WorkPath: s.ClaimPath, Secret: s.Secret, HostNetwork: s.HostNetwork, StartTimeout: s.StartTimeout,
		PlainEnv: s.PlainEnv,
	}
	if c.Namespace == "" {
		if b, err := os.ReadFile(inClusterNamespace); err == nil {
			c.Namespace = strings.TrimSpace(string(b))
		}
	}
	quantity := func(name, v string, q *resource.Quantity) {
		p, err := resource.ParseQuantity(v)
		if err != nil || p.Sign() < 0 {
			bad = append(bad, fmt.Sprintf("%s %q: want a quantity such as 500m or 512Mi", name, v))
			return
		}
		*q = p
	}
	quantity("CLAUDEOPS_KUBERNETES_CPU_REQUEST", s.CPURequest, &c.CPURequest)
	quantity("CLAUDEOPS_KUBERNETES_MEMORY_REQUEST", s.MemoryRequest, &c.MemoryRequest)
	if mem, err := units.RAMInBytes(s.Memory); err != nil || mem < 64<<20 {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_RUNNER_MEMORY %q: want a size such as 2g or 512m, at least 64m", s.Memory))
	} else {
		c.MemoryLimit = *resource.NewQuantity(mem, resource.BinarySI)
	}
	if s.CPUs <= 0 {
		bad = append(bad, fmt.Sprintf("CLAUDEOPS_RUNNER_CPUS %g: want more than 0", s.CPUs))
	} else {
		c.CPULimit = *resource.NewMilliQuantity(int64(s.CPUs*1000), resource.DecimalSI)
	}
	c.UID, c.GID = int64(os.Getuid()), int64(os.Getgid())
	if s.User != "" {
		m := userRe().FindStringSubmatch(s.User)
		if m == nil {
			bad = append(bad, fmt.Sprintf("CLAUDEOPS_RUNNER_USER %q: want uid:gid, numbers", s.User))
		} else {
			c.UID, _ = strconv.ParseInt(m[1], 10, 64)
			c.GID, _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	for _, msg := range c.Check() {
		field, rest, _ := strings.Cut(msg, " ")
		if name, ok := settingVars[field]; ok {
			msg = name + " " + rest
		}
		if field == "user" && s.User == "" {
			msg += "; the bot runs as root: set CLAUDEOPS_RUNNER_USER"
		}
		bad = append(bad, msg)
	}
	return c, bad
}

// Check lists what is wrong with the settings on h, all at once: the
// runner's configuration, where sessions work, and credentials passed on.
func (s Settings) Check(h claudeproc.Host) []claudeproc.Problem {
	_, bad := s.Config(h.Instance)
	out := make([]claudeproc.Problem, 0, len(bad))
	for _, l := range bad {
		out = append(out, claudeproc.Problem{Want: l})
	}
	out = append(out, s.places(h)...)
	return append(out, s.credentials(h)...)
}

// places checks that the claim holds the directories sessions work in
// (the default working directory, the repositories' worktrees), below its
// root and apart from the CLI's state.
func (s Settings) places(h claudeproc.Host) []claudeproc.Problem {
	claim := s.ClaimPath
	if !filepath.IsAbs(claim) || filepath.Clean(claim) == "/" {
		return nil // Config says what is wrong with it
	}
	claim = filepath.Clean(claim)
	homes := filepath.Join(claim, HomesDir)
	var out []claudeproc.Problem
	for _, d := range h.WorkDirs {
		w := absPath(d.Path)
		if !fspath.Within(w, claim) || w == claim || fspath.Within(homes, w) || fspath.Within(w, homes) {
			out = append(out, claudeproc.Problem{Var: d.Var, Value: d.Path, Want: fmt.Sprintf(
				"want a directory below CLAUDEOPS_KUBERNETES_CLAIM_PATH %s (sessions' Pods reach it through the claim), apart from %s", claim, homes)})
		}
	}
	return out
}

// credentials refuses a variable passed with CLAUDEOPS_CLAUDE_ENV that
// looks like a credential (Credential): a Pod's spec is readable by
// whoever may read Pods, so it would be left out of the session's
// environment without a word. The operator puts it in the Secret, or says
// it is none. Names only are shown, never values.
func (s Settings) credentials(h claudeproc.Host) []claudeproc.Problem {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(h.Environ)) {
		if !namedIn(name, h.ClaudeEnv) || slices.Contains(s.PlainEnv, name) {
			continue
		}
		if Credential(name, h.Environ[name]) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return []claudeproc.Problem{{Var: "CLAUDEOPS_CLAUDE_ENV", Want: fmt.Sprintf(
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

// HostCheck has nothing to check: Build asks the cluster.
func (Settings) HostCheck(claudeproc.Host) []claudeproc.Problem { return nil }

// Build makes the runner and checks the cluster and the image's CLI before
// the bot takes any message; Pods a previous run left are deleted.
func (s Settings) Build(ctx context.Context, h claudeproc.Host) (claudeproc.Runner, claudeproc.VersionInfo, error) {
	var cli claudeproc.VersionInfo
	kc, bad := s.Config(h.Instance)
	if len(bad) > 0 {
		return nil, cli, fmt.Errorf("kubernetes runner: %s", strings.Join(bad, "; "))
	}
	kc.Logger = h.Logger
	// client-go reports what it cannot hand back (a stream's copy that
	// failed) through klog: into the bot's log, not stderr as text.
	klog.SetSlogLogger(h.Logger.With("part", "client-go"))
	rc, err := restConfig(s.Kubeconfig)
	if err != nil {
		return nil, cli, fmt.Errorf("kubernetes runner: %w", err)
	}
	r, err := New(kc, rc)
	if err != nil {
		return nil, cli, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := r.Prepare(ctx); err != nil {
		return nil, cli, fmt.Errorf("kubernetes runner: %w", err)
	}
	if cli, err = claudeproc.StartImageCLI(ctx, r, cmp.Or(h.ClaudeBin, "claude"), h.Logger); err != nil {
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

// OwnDirs are, while it is the runner in use, its directories on the
// claim that no session may work in or be granted: every thread's CLI
// state. (Another runner's claim path means nothing.)
func (s Settings) OwnDirs(_ claudeproc.Host, inUse bool) []string {
	if !inUse || !filepath.IsAbs(s.ClaimPath) {
		return nil
	}
	return []string{filepath.Join(filepath.Clean(s.ClaimPath), HomesDir)}
}

// ImageCLI: the CLI is the image's.
func (Settings) ImageCLI() bool { return true }

// SharesHostLoopback: only a Pod in the node's network has the node's
// loopback (an operator's http MCP server there, say).
func (s Settings) SharesHostLoopback() bool { return s.HostNetwork }

// CLIRecheck is how often readiness checks the image's CLI again, and how
// long one check may take: each check is a Pod, an image's CLI changes
// with a deployment, not by the minute, and a Pod may take a while to be
// scheduled.
func (Settings) CLIRecheck() (every, limit time.Duration) { return time.Hour, 2 * time.Minute }

// EnvCredentials is false: sessions' Pods take the model's credentials
// from the operator's Secret, not the bot's environment.
func (Settings) EnvCredentials() bool { return false }

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
