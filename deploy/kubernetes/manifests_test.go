// Package kubernetes_test checks the deployment manifests in this
// directory: each decodes strictly with client-go's scheme, the Role grants
// exactly what the kubernetes runner does, and the Deployment is wired to
// the settings docs/CONFIGURATION.md documents. cluster_test.go applies the RBAC
// objects to a real cluster (internal/kubetest): the Role's grants, and
// the runner running with them alone. The manifests: namespace,
// ServiceAccount, Role, RoleBinding, the state and work claims, the
// Deployment and Secret examples (kubectl apply -k).
package kubernetes_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/claudeops/claudeops/claudeproc/kubernetes"
	"github.com/claudeops/claudeops/internal/mdtable"
)

// manifest is one object of one file.
type manifest struct {
	file string
	obj  runtime.Object
}

// strict decodes with client-go's scheme and fails on unknown or
// duplicate fields.
var strict = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// decodeFile decodes every YAML document of path.
func decodeFile(path string) ([]runtime.Object, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := strict.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	if len(out) == 0 {
		return nil, errors.New("no object")
	}
	return out, nil
}

// stripComments drops whole-line comments, to tell an empty document.
func stripComments(doc []byte) []byte {
	var out [][]byte
	for l := range bytes.SplitSeq(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// manifestFiles are the YAML files of this directory but kustomization.yaml.
func manifestFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return f == "kustomization.yaml" })
	if len(files) == 0 {
		t.Fatal("no manifests here")
	}
	return files
}

// loadAll decodes every manifest; a file that does not decode fails the
// test.
func loadAll(t *testing.T) []manifest {
	t.Helper()
	var out []manifest
	for _, f := range manifestFiles(t) {
		objs, err := decodeFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			out = append(out, manifest{file: f, obj: o})
		}
	}
	return out
}

// only returns the one object of type T among ms, failing unless exactly
// one matches keep.
func only[T runtime.Object](t *testing.T, ms []manifest, keep func(T) bool) T {
	t.Helper()
	var found []T
	for _, m := range ms {
		if o, ok := m.obj.(T); ok && (keep == nil || keep(o)) {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("want one %T among the manifests, found %d", zero, len(found))
	}
	return found[0]
}

func deployment(t *testing.T, ms []manifest) *appsv1.Deployment {
	return only[*appsv1.Deployment](t, ms, nil)
}

// botContainer is the Deployment's one container.
func botContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", n)
	}
	return d.Spec.Template.Spec.Containers[0]
}

// envOf is a container's environment by name; a name set twice or taken
// from elsewhere than a literal value fails the test.
func envOf(t *testing.T, c corev1.Container) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("container %s sets %s twice", c.Name, e.Name)
		}
		if e.ValueFrom != nil {
			t.Errorf("container %s takes %s from elsewhere: the manifests name settings, secrets are files", c.Name, e.Name)
		}
		env[e.Name] = e.Value
	}
	return env
}

func TestManifestsDecodeStrictly(t *testing.T) {
	ms := loadAll(t)
	for _, m := range ms {
		acc, err := meta.Accessor(m.obj)
		if err != nil {
			t.Errorf("%s: %v", m.file, err)
			continue
		}
		if acc.GetName() == "" {
			t.Errorf("%s: an object without a name", m.file)
		}
	}
	// The strict decoder is what catches a misspelt field: prove it does.
	bad := []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\nautomountServiceAcountToken: false\n")
	if _, _, err := strict.Decode(bad, nil, nil); err == nil {
		t.Error("the strict decoder took an unknown field")
	}
}

// kustomization is the part of kustomization.yaml this directory uses.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
}

func TestKustomizationListsTheManifests(t *testing.T) {
	b, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if k.Kind != "Kustomization" || k.APIVersion != "kustomize.config.k8s.io/v1beta1" {
		t.Errorf("kustomization.yaml: kind %q apiVersion %q", k.Kind, k.APIVersion)
	}
	// Everything but the examples with placeholders, which applying
	// would write over the operator's real Secrets.
	var want []string
	for _, f := range manifestFiles(t) {
		if !strings.HasSuffix(f, ".example.yaml") {
			want = append(want, f)
		}
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(got, want) {
		t.Errorf("kustomization.yaml lists %v, want %v", got, want)
	}
	for _, m := range loadAll(t) {
		acc, err := meta.Accessor(m.obj)
		if err != nil {
			t.Fatal(err)
		}
		ns := acc.GetNamespace()
		if _, isNS := m.obj.(*corev1.Namespace); isNS {
			ns = acc.GetName()
		}
		if ns != k.Namespace {
			t.Errorf("%s: %s in namespace %q, the kustomization's is %q", m.file, acc.GetName(), ns, k.Namespace)
		}
	}
}

// runnerVerbs is what the Role must grant: exactly what the runner checks
// at start (kubernetes.Needed); cluster_test.go checks the link to the
// runner itself: its Prepare passes with this Role alone.
func runnerVerbs() []string {
	var out []string
	for _, ra := range kubernetes.Needed() {
		what := ra.Resource
		if ra.Subresource != "" {
			what += "/" + ra.Subresource
		}
		out = append(out, what+" "+ra.Verb)
	}
	slices.Sort(out)
	return out
}

// grants flattens rules to "resource verb" pairs of the core group; any
// other group, a resource name restriction, a wildcard or a non-resource
// URL is reported as bad.
func grants(rules []rbacv1.PolicyRule) (pairs, bad []string) {
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 || !slices.Equal(r.APIGroups, []string{""}) {
			bad = append(bad, r.String())
			continue
		}
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if res == "*" || v == "*" {
					bad = append(bad, r.String())
				}
				pairs = append(pairs, res+" "+v)
			}
		}
	}
	slices.Sort(pairs)
	return slices.Compact(pairs), bad
}

func TestRoleGrantsExactlyTheRunnersVerbs(t *testing.T) {
	ms := loadAll(t)
	role := only[*rbacv1.Role](t, ms, nil)
	pairs, bad := grants(role.Rules)
	if len(bad) > 0 {
		t.Errorf("Role %s: rules beyond the core group's pods: %v", role.Name, bad)
	}
	if want := runnerVerbs(); !slices.Equal(pairs, want) {
		t.Errorf("Role %s grants %v, want exactly %v", role.Name, pairs, want)
	}
	for _, m := range ms {
		switch m.obj.(type) {
		case *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding:
			t.Errorf("%s: a cluster-wide RBAC object: the bot needs nothing outside its namespace", m.file)
		}
	}

	sa := only[*corev1.ServiceAccount](t, ms, nil)
	rb := only[*rbacv1.RoleBinding](t, ms, nil)
	if rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}) {
		t.Errorf("RoleBinding %s refers to %+v, want Role %s", rb.Name, rb.RoleRef, role.Name)
	}
	wantSub := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}}
	if !slices.Equal(rb.Subjects, wantSub) {
		t.Errorf("RoleBinding %s binds %+v, want %+v", rb.Name, rb.Subjects, wantSub)
	}
	if rb.Namespace != role.Namespace || role.Namespace != sa.Namespace {
		t.Errorf("the Role (%s), its binding (%s) and the ServiceAccount (%s) are not in one namespace", role.Namespace, rb.Namespace, sa.Namespace)
	}
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("ServiceAccount %s mounts its token by default: only the bot's Pod should ask for it", sa.Name)
	}
	spec := deployment(t, ms).Spec.Template.Spec
	if spec.ServiceAccountName != sa.Name {
		t.Errorf("the Deployment runs as ServiceAccount %q, want %q", spec.ServiceAccountName, sa.Name)
	}
	if spec.AutomountServiceAccountToken == nil || !*spec.AutomountServiceAccountToken {
		t.Error("the bot's Pod does not mount its ServiceAccount's token: it could not reach the API")
	}
}

func TestDeploymentOneReplicaRecreate(t *testing.T) {
	d := deployment(t, loadAll(t))
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas %v, want 1: one bot per database", deref(d.Spec.Replicas))
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy %q, want Recreate: never two bots at once", d.Spec.Strategy.Type)
	}
}

// documented are the variables in the first column of the tables of
// docs/CONFIGURATION.md, the configuration reference.
func documented(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../docs/CONFIGURATION.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	tick := regexp.MustCompile("`([A-Z][A-Z0-9_]*)`")
	for _, cells := range mdtable.Rows(string(b), "| variable | default | meaning |") {
		for _, m := range tick.FindAllStringSubmatch(cells[0], -1) {
			names[m[1]] = true
		}
	}
	if len(names) < 20 {
		t.Fatalf("found %d variables in docs/CONFIGURATION.md's tables: are they still headed \"| variable | default | meaning |\"?", len(names))
	}
	return names
}

func TestDeploymentSettingsAreDocumented(t *testing.T) {
	doc := documented(t)
	d := deployment(t, loadAll(t))
	spec := d.Spec.Template.Spec
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, name := range slices.Sorted(maps.Keys(envOf(t, c))) {
			ours := strings.HasPrefix(name, "CLAUDEOPS_") || strings.HasPrefix(name, "SLACK_") || strings.HasPrefix(name, "MATRIX_")
			if ours && !doc[name] {
				t.Errorf("container %s sets %s, which docs/CONFIGURATION.md does not document", c.Name, name)
			}
		}
	}
	env := envOf(t, botContainer(t, d))
	if env["CLAUDEOPS_RUNNER"] != "kubernetes" {
		t.Errorf("CLAUDEOPS_RUNNER=%q, want kubernetes", env["CLAUDEOPS_RUNNER"])
	}
}

func TestDeploymentNonRoot(t *testing.T) {
	d := deployment(t, loadAll(t))
	spec := d.Spec.Template.Spec
	psc := spec.SecurityContext
	if psc == nil {
		t.Fatal("the Pod has no securityContext")
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Error("the bot's Pod shares a namespace of the node")
	}
	if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("the Pod has no RuntimeDefault seccomp profile")
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("container %s has no securityContext", c.Name)
			continue
		}
		nonRoot := firstSet(sc.RunAsNonRoot, psc.RunAsNonRoot)
		uid := firstSet(sc.RunAsUser, psc.RunAsUser)
		if nonRoot == nil || !*nonRoot || uid == nil || *uid == 0 {
			t.Errorf("container %s: runAsNonRoot %v, runAsUser %v: want a user other than root, enforced", c.Name, deref(nonRoot), deref(uid))
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s may escalate privileges", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s is privileged", c.Name)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("container %s: capabilities %+v, want all dropped and none added", c.Name, sc.Capabilities)
		}
	}
	// The image's user (the Dockerfile's useradd) owns what the image
	// ships under /data: the Pod runs as that user.
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`useradd [^\n]*--uid (\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Dockerfile's useradd --uid not found")
	}
	if psc.RunAsUser == nil || string(m[1]) != strconv.FormatInt(*psc.RunAsUser, 10) {
		t.Errorf("the Pod runs as uid %v, the image's user is %s", deref(psc.RunAsUser), m[1])
	}
}

func firstSet[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

func deref[T any](p *T) any {
	if p == nil {
		return "unset"
	}
	return *p
}
