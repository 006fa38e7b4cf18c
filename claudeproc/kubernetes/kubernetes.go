package kubernetes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	authv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fspath"
)

// Defaults of Config.
const (
	DefaultStartTimeout = 5 * time.Minute
	// Home is HOME in a Pod; the CLI's state is Home/.claude.
	Home = "/home/claude"
	// HomesDir is where, below the work claim's root, the CLI's state of
	// each thread lives: HomesDir/<instance>/<thread hash>
	// (claudeproc.Session.HomeKey).
	HomesDir = "claude-homes"
)

// Labels put on every Pod of the runner. Values are hashes: a channel or
// thread key may hold characters a label may not.
const (
	LabelInstance  = "claudeops.io/instance"
	LabelChannel   = "claudeops.io/channel" // sha256 of the channel key, hex, 16 chars
	LabelThread    = "claudeops.io/thread"  // the same of the thread key
	LabelManagedBy = "app.kubernetes.io/managed-by"
)

// Config says where and how sessions' Pods are made.
type Config struct {
	// Namespace holds the Pods; the bot's credentials must allow what the
	// runner does there (pods create/get/list/watch/delete, pods/attach).
	Namespace string
	// Image holds the CLI (Spec.Bin is resolved in it, with /bin/sh) and
	// the tools the repositories need. Never pulled by the runner's say:
	// the image pull policy is the cluster's default for its tag.
	Image string
	// Instance names this bot in labels, so that bots sharing a namespace
	// never take each other's Pods for leftovers: a label value.
	Instance string
	// Requests and limits of each Pod's container.
	CPURequest, MemoryRequest, CPULimit, MemoryLimit resource.Quantity
	// UID and GID the CLI runs as: not root.
	UID, GID int64
	// WorkClaim is the PersistentVolumeClaim holding the sessions' working
	// directories and the CLI's state; WorkPath is where the bot has that
	// claim mounted. A session's directory must lie below WorkPath.
	WorkClaim, WorkPath string
	// Secret, when set, names a Secret of Namespace whose keys become the
	// CLI's environment (ANTHROPIC_API_KEY, …).
	Secret string
	// PlainEnv names variables of the CLI's environment that look like a
	// credential (Credential) but are not one: the operator says so, and
	// they go into the Pod's spec. Every other such variable is left out.
	PlainEnv []string
	// HostNetwork runs Pods in the node's network namespace (a model API
	// reachable only on the node's loopback).
	HostNetwork bool
	// StartTimeout bounds how long a Pod may wait to run (for capacity,
	// for its image); 0 is DefaultStartTimeout.
	StartTimeout time.Duration
	Logger       *slog.Logger
}

// Compiled at first use, not at init: counted repetitions make large
// programs, paid by every start of a build that links this package
// (docs/PERFORMANCE.md, "How much memory does the bot hold?").
var labelValueRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9_.-]{0,61}[a-zA-Z0-9])?$`) })

// dnsLabelRe is a namespace's, a claim's or a Secret's name.
var dnsNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`) })

// Check lists what is wrong with c, all at once. Each complaint starts
// with the field's name in lower case.
func (c Config) Check() []string {
	var bad []string
	if !dnsNameRe().MatchString(c.Namespace) || len(c.Namespace) > 63 {
		bad = append(bad, fmt.Sprintf("namespace %q: want a namespace's name (lower case letters, digits, '-')", c.Namespace))
	}
	if c.Image == "" {
		bad = append(bad, "image is required")
	}
	if !labelValueRe().MatchString(c.Instance) {
		bad = append(bad, fmt.Sprintf("instance %q: want 1-63 letters, digits, '_', '.', '-', starting and ending with a letter or digit", c.Instance))
	}
	if c.UID <= 0 || c.GID < 0 {
		bad = append(bad, fmt.Sprintf("user %d:%d: a Pod runs the CLI as a user other than root (uid above 0)", c.UID, c.GID))
	}
	if !dnsNameRe().MatchString(c.WorkClaim) {
		bad = append(bad, fmt.Sprintf("claim %q: want the name of a PersistentVolumeClaim", c.WorkClaim))
	}
	if !filepath.IsAbs(c.WorkPath) || filepath.Clean(c.WorkPath) == "/" {
		bad = append(bad, fmt.Sprintf("claim_path %q: want the absolute path (not /) where the bot has the claim mounted", c.WorkPath))
	}
	if c.Secret != "" && !dnsNameRe().MatchString(c.Secret) {
		bad = append(bad, fmt.Sprintf("secret %q: want the name of a Secret", c.Secret))
	}
	if c.MemoryLimit.Sign() > 0 && c.MemoryRequest.Cmp(c.MemoryLimit) > 0 {
		bad = append(bad, fmt.Sprintf("memory_request %s: more than the limit %s", c.MemoryRequest.String(), c.MemoryLimit.String()))
	}
	if c.CPULimit.Sign() > 0 && c.CPURequest.Cmp(c.CPULimit) > 0 {
		bad = append(bad, fmt.Sprintf("cpu_request %s: more than the limit %s", c.CPURequest.String(), c.CPULimit.String()))
	}
	if c.StartTimeout < 0 {
		bad = append(bad, fmt.Sprintf("start_timeout %s: want a positive duration", c.StartTimeout))
	}
	return bad
}

// Homes is the directory (as the bot sees it) that holds the CLI's state
// of every thread: no session's working directory may contain it.
func (c Config) Homes() string { return filepath.Join(c.WorkPath, HomesDir) }

// Runner starts sessions' CLIs in Pods. Safe for concurrent use.
type Runner struct {
	cfg  Config
	rest *rest.Config
	cli  clients
	log  *slog.Logger
}

// clients are the API groups the runner calls: Pods (core) and its own
// permissions (authorization). Not client-go's whole clientset, which
// links a client for every API group (docs/PERFORMANCE.md).
type clients struct {
	core corev1client.CoreV1Interface
	auth authv1client.AuthorizationV1Interface
}

func (c clients) CoreV1() corev1client.CoreV1Interface                   { return c.core }
func (c clients) AuthorizationV1() authv1client.AuthorizationV1Interface { return c.auth }

// newClients makes the runner's clients over one HTTP client, as the
// clientset would.
func newClients(rc *rest.Config) (clients, error) {
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return clients{}, err
	}
	core, err := corev1client.NewForConfigAndClient(rc, hc)
	if err != nil {
		return clients{}, err
	}
	auth, err := authv1client.NewForConfigAndClient(rc, hc)
	if err != nil {
		return clients{}, err
	}
	return clients{core: core, auth: auth}, nil
}

var _ claudeproc.ConfigPasser = (*Runner)(nil)

// PassesMCPConfig implements claudeproc.ConfigPasser: the Pod's launcher
// gives the CLI the configuration the runner writes on its stdin first.
func (r *Runner) PassesMCPConfig() bool { return true }

// New makes a runner for cfg that reaches the cluster with rc. It does no
// I/O: Prepare checks the cluster.
func New(cfg Config, rc *rest.Config) (*Runner, error) {
	if bad := cfg.Check(); len(bad) > 0 {
		return nil, fmt.Errorf("kubernetes runner: %s", strings.Join(bad, "; "))
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	cfg.WorkPath = filepath.Clean(cfg.WorkPath)
	cli, err := newClients(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes runner: make the API client: %w", err)
	}
	r := &Runner{cfg: cfg, rest: rc, cli: cli, log: cfg.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// Selector is the label selector of every Pod of this instance.
func (r *Runner) Selector() string { return LabelInstance + "=" + r.cfg.Instance }

// needed is what the runner does in its namespace: checked at start, so
// that a Role missing a verb is told at once and not at the first mention.
var needed = []authv1.ResourceAttributes{
	{Verb: "create", Resource: "pods"},
	{Verb: "get", Resource: "pods"},
	{Verb: "list", Resource: "pods"},
	{Verb: "watch", Resource: "pods"},
	{Verb: "delete", Resource: "pods"},
	{Verb: "create", Resource: "pods", Subresource: "attach"},
	// The WebSocket attach is a GET: authorized as get, then create.
	{Verb: "get", Resource: "pods", Subresource: "attach"},
}

// Needed is what the runner's credentials must allow in its namespace,
// each a verb on a resource of the core group: the Role in
// deploy/kubernetes grants exactly these.
func Needed() []authv1.ResourceAttributes { return slices.Clone(needed) }

// Prepare checks that the API answers and allows the runner's verbs, and
// deletes the Pods a previous run of this instance left, waiting until
// they are gone: call it once at start, before any session.
func (r *Runner) Prepare(ctx context.Context) error {
	var missing []string
	for _, ra := range needed {
		ra.Namespace = r.cfg.Namespace
		ra.Group = ""
		rev, err := r.cli.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
			&authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}, createOpts)
		if err != nil {
			return fmt.Errorf("reach the Kubernetes API at %s: %w", r.rest.Host, err)
		}
		if !rev.Status.Allowed {
			what := ra.Resource
			if ra.Subresource != "" {
				what += "/" + ra.Subresource
			}
			missing = append(missing, ra.Verb+" "+what)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the bot may not %s in namespace %s (see the Role in deploy/kubernetes)",
			strings.Join(missing, ", "), r.cfg.Namespace)
	}
	n, err := r.removeLeftovers(ctx)
	if err != nil {
		return err
	}
	r.log.Info("kubernetes runner ready", "api", r.rest.Host, "namespace", r.cfg.Namespace,
		"image", r.cfg.Image, "instance", r.cfg.Instance, "removed_leftovers", n)
	return nil
}

// Hash is how session keys appear in labels and names.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// homeDir is s's CLI state (its thread's) as the bot sees it, and the
// subPath of the claim that holds it.
func (r *Runner) homeDir(s claudeproc.Session) (dir, sub string) {
	sub = filepath.Join(HomesDir, r.cfg.Instance, Hash(s.HomeKey()))
	return filepath.Join(r.cfg.WorkPath, sub), sub
}

// workSubPath is dir's subPath in the work claim. The directory must lie
// below the claim's mount and must not hold the CLI homes.
func (r *Runner) workSubPath(dir string) (string, error) {
	return r.claimSubPath("the working directory", dir)
}

// claimSubPath is dir's subPath in the work claim, what naming dir in
// errors: dir must lie below the claim's mount and must not hold the CLI
// homes or lie in them.
func (r *Runner) claimSubPath(what, dir string) (string, error) {
	dir = filepath.Clean(dir)
	if !fspath.Within(dir, r.cfg.WorkPath) || dir == r.cfg.WorkPath {
		return "", fmt.Errorf("%s %s is not below %s, where the work claim %s is mounted", what, dir, r.cfg.WorkPath, r.cfg.WorkClaim)
	}
	if homes := r.cfg.Homes(); fspath.Within(homes, dir) || fspath.Within(dir, homes) {
		return "", fmt.Errorf("%s %s holds or lies in the CLI's state of the threads (%s)", what, dir, homes)
	}
	rel, err := filepath.Rel(r.cfg.WorkPath, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", errors.New(what + " " + dir + " is not below " + r.cfg.WorkPath)
	}
	return rel, nil
}

// CanMount implements claudeproc.MountChecker: a Pod sees the work claim's
// directories only, the CLI homes apart.
func (r *Runner) CanMount(dir string) bool {
	_, err := r.claimSubPath("mount", dir)
	return err == nil
}
