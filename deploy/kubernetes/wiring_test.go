package kubernetes_test

import (
	"fmt"
	"net"
	"path"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claudeops/claudeops/claudeproc/kubernetes"
	"github.com/claudeops/claudeops/internal/fspath"
)

// mountOf is the bot container's volume mount holding p (the deepest), and
// the Pod's volume it mounts.
func mountOf(spec corev1.PodSpec, c corev1.Container, p string) (corev1.VolumeMount, corev1.Volume, bool) {
	var best corev1.VolumeMount
	found := false
	for _, m := range c.VolumeMounts {
		if fspath.Within(p, m.MountPath) && (!found || len(m.MountPath) > len(best.MountPath)) {
			best, found = m, true
		}
	}
	if !found {
		return best, corev1.Volume{}, false
	}
	i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == best.Name })
	if i < 0 {
		return best, corev1.Volume{}, false
	}
	return best, spec.Volumes[i], true
}

func claimNamed(t *testing.T, ms []manifest, name string) *corev1.PersistentVolumeClaim {
	return only(t, ms, func(c *corev1.PersistentVolumeClaim) bool { return c.Name == name })
}

func secretNamed(t *testing.T, ms []manifest, name string) *corev1.Secret {
	return only(t, ms, func(s *corev1.Secret) bool { return s.Name == name })
}

// TestDeploymentWiring: the settings name what the manifests make, and
// the bot's Pod mounts it where the settings say.
func TestDeploymentWiring(t *testing.T) {
	ms := loadAll(t)
	d := deployment(t, ms)
	spec := d.Spec.Template.Spec
	c := botContainer(t, d)
	env := envOf(t, c)

	t.Run("work claim", func(t *testing.T) { checkWorkClaim(t, ms, spec, c, env) })
	t.Run("state", func(t *testing.T) { checkState(t, ms, spec, c, env) })
	t.Run("secrets", func(t *testing.T) { checkSecrets(t, ms, spec, c, env) })
	t.Run("probes", func(t *testing.T) { checkProbes(t, c, env) })
	t.Run("runner", func(t *testing.T) { checkRunner(t, d, c, env) })
}

func checkWorkClaim(t *testing.T, ms []manifest, spec corev1.PodSpec, c corev1.Container, env map[string]string) {
	root := env["CLAUDEOPS_KUBERNETES_CLAIM_PATH"]
	pvc := claimNamed(t, ms, env["CLAUDEOPS_KUBERNETES_CLAIM"])
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("the work claim %s is %v: the bot's and the sessions' Pods mount it at once, on any node", pvc.Name, pvc.Spec.AccessModes)
	}
	m, v, ok := mountOf(spec, c, root)
	if !ok || m.MountPath != root || m.SubPath != "" || m.ReadOnly ||
		v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Errorf("the claim %s is not mounted whole and writable at CLAUDEOPS_KUBERNETES_CLAIM_PATH %s (mount %+v)", pvc.Name, root, m)
	}
	homes := path.Join(root, kubernetes.HomesDir)
	for _, name := range []string{"CLAUDEOPS_WORKDIR", "CLAUDEOPS_WORKSPACES"} {
		dir := env[name]
		if !fspath.Within(dir, root) || dir == root || fspath.Within(dir, homes) || fspath.Within(homes, dir) {
			t.Errorf("%s=%q: want a directory below %s, apart from %s", name, dir, root, homes)
		}
	}
}

func checkState(t *testing.T, ms []manifest, spec corev1.PodSpec, c corev1.Container, env map[string]string) {
	for _, name := range []string{"CLAUDEOPS_STATE_DIR", "HOME"} {
		dir := env[name]
		m, v, ok := mountOf(spec, c, dir)
		if !ok || v.PersistentVolumeClaim == nil || m.ReadOnly {
			t.Errorf("%s=%q is not on a writable claim", name, dir)
			continue
		}
		pvc := claimNamed(t, ms, v.PersistentVolumeClaim.ClaimName)
		if pvc.Name == env["CLAUDEOPS_KUBERNETES_CLAIM"] {
			t.Errorf("%s=%q is on the work claim, which the sessions' Pods mount", name, dir)
		}
		if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
			t.Errorf("the state claim %s is %v, want ReadWriteOnce: the bot's alone", pvc.Name, pvc.Spec.AccessModes)
		}
	}
}

func checkSecrets(t *testing.T, ms []manifest, spec corev1.PodSpec, c corev1.Container, env map[string]string) {
	model := secretNamed(t, ms, env["CLAUDEOPS_KUBERNETES_SECRET"])
	if !placeholders(model) {
		t.Errorf("Secret %s: every value should be a PLACEHOLDER in the example", model.Name)
	}
	for k := range model.StringData {
		if len(validation.IsEnvVarName(k)) > 0 {
			t.Errorf("Secret %s: key %q cannot be an environment variable of the CLI", model.Name, k)
		}
	}
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == model.Name {
			t.Errorf("the bot's Pod mounts the sessions' Secret %s: it never reads it", model.Name)
		}
	}
	files := 0
	for name, val := range env {
		if !strings.HasSuffix(name, "_FILE") {
			// The bot's own settings name no credential (…_SECRET names
			// a Secret): only their values are looked at.
			byName := name
			if strings.HasPrefix(name, "CLAUDEOPS_") {
				byName = ""
			}
			if kubernetes.Credential(byName, val) {
				t.Errorf("%s is set in the Deployment's spec, which whoever may read Deployments reads: mount it as a file", name)
			}
			continue
		}
		files++
		m, v, ok := mountOf(spec, c, val)
		if !ok || v.Secret == nil || !m.ReadOnly {
			t.Errorf("%s=%q is not in a read-only mount of a Secret", name, val)
			continue
		}
		s := secretNamed(t, ms, v.Secret.SecretName)
		if _, ok := s.StringData[path.Base(val)]; !ok || path.Dir(val) != m.MountPath {
			t.Errorf("%s=%q: Secret %s has no key %q", name, val, s.Name, path.Base(val))
		}
		if !placeholders(s) {
			t.Errorf("Secret %s: every value should be a PLACEHOLDER in the example", s.Name)
		}
		if v.Secret.DefaultMode == nil || *v.Secret.DefaultMode != 0o440 {
			t.Errorf("Secret volume %s: mode %v, want 0440 (the bot's group reads it, nobody else)", v.Name, deref(v.Secret.DefaultMode))
		}
	}
	if files == 0 {
		t.Error("no chat credentials named as files")
	}
}

// placeholders reports whether s, an example, holds placeholders only.
func placeholders(s *corev1.Secret) bool {
	if len(s.Data) > 0 || len(s.StringData) == 0 {
		return false
	}
	for _, v := range s.StringData {
		if !strings.HasPrefix(v, "PLACEHOLDER") {
			return false
		}
	}
	return true
}

func checkProbes(t *testing.T, c corev1.Container, env map[string]string) {
	_, port, err := net.SplitHostPort(env["CLAUDEOPS_HTTP_ADDR"])
	if err != nil {
		t.Fatalf("CLAUDEOPS_HTTP_ADDR=%q: %v", env["CLAUDEOPS_HTTP_ADDR"], err)
	}
	probes := []struct {
		name string
		p    *corev1.Probe
		path string
	}{
		{"startup", c.StartupProbe, "/healthz"},
		{"liveness", c.LivenessProbe, "/healthz"},
		{"readiness", c.ReadinessProbe, "/readyz"},
	}
	for _, pr := range probes {
		if pr.p == nil || pr.p.HTTPGet == nil {
			t.Errorf("no %s probe over HTTP", pr.name)
			continue
		}
		if pr.p.HTTPGet.Path != pr.path {
			t.Errorf("%s probe GETs %s, want %s", pr.name, pr.p.HTTPGet.Path, pr.path)
		}
		if got := probePort(c, pr.p); got != port {
			t.Errorf("%s probe asks port %s, the bot serves %s", pr.name, got, port)
		}
	}
	// /readyz answers within 3 s whatever hangs (health/ready.go).
	if c.ReadinessProbe != nil && c.ReadinessProbe.TimeoutSeconds < 3 {
		t.Errorf("readiness probe timeout %ds: /readyz may take 3 s", c.ReadinessProbe.TimeoutSeconds)
	}
}

// probePort is the number a probe's port names.
func probePort(c corev1.Container, p *corev1.Probe) string {
	port := p.HTTPGet.Port
	if port.IntValue() > 0 {
		return port.String()
	}
	for _, cp := range c.Ports {
		if cp.Name == port.String() {
			return fmt.Sprint(cp.ContainerPort)
		}
	}
	return "(no port named " + port.String() + ")"
}

func checkRunner(t *testing.T, d *appsv1.Deployment, c corev1.Container, env map[string]string) {
	spec := d.Spec.Template.Spec
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsUser == nil || psc.RunAsGroup == nil {
		t.Fatal("the Pod names no user and group")
	}
	if want := fmt.Sprintf("%d:%d", *psc.RunAsUser, *psc.RunAsGroup); env["CLAUDEOPS_RUNNER_USER"] != want {
		t.Errorf("CLAUDEOPS_RUNNER_USER=%q, want the bot's %s: what sessions write on the claim is the bot's", env["CLAUDEOPS_RUNNER_USER"], want)
	}
	if env["CLAUDEOPS_RUNNER_IMAGE"] == "" {
		t.Error("CLAUDEOPS_RUNNER_IMAGE is not set")
	}
	for _, ic := range spec.InitContainers {
		if ic.Image != c.Image {
			t.Errorf("init container %s runs %s, the bot %s", ic.Name, ic.Image, c.Image)
		}
	}
	inst := env["CLAUDEOPS_KUBERNETES_INSTANCE"]
	if errs := validation.IsValidLabelValue(inst); inst == "" || len(errs) > 0 {
		t.Errorf("CLAUDEOPS_KUBERNETES_INSTANCE=%q: not a label value: %v", inst, errs)
	}
	// The Deployment must never take the sessions' Pods for its own.
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Error("the Deployment's selector does not select its own Pods")
	}
	session := labels.Set{
		kubernetes.LabelInstance: inst, kubernetes.LabelManagedBy: "claudeops",
		kubernetes.LabelChannel: kubernetes.Hash("c"), kubernetes.LabelThread: kubernetes.Hash("t"),
	}
	_, taken := d.Spec.Template.Labels[kubernetes.LabelInstance]
	if sel.Matches(session) || taken {
		t.Error("the Deployment's selector, or its Pods' labels, overlap the sessions' Pods'")
	}
}
