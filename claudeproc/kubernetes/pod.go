package kubernetes

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claudeops/claudeops/claudeproc"
)

// Annotations name the session in plain words for an operator looking at
// a Pod; labels carry only hashes.
const (
	AnnotationChannel = "claudeops.io/channel-key"
	AnnotationThread  = "claudeops.io/thread-key"
)

// container is the name of the CLI's container in every Pod.
const container = "claude"

// gracePeriod is how long a deleted Pod's CLI has after SIGTERM.
const gracePeriod = 10

// The Pod runs claudeproc.ImageLauncher, which waits for the bot's first
// line before it runs the CLI: output written before the attach would be
// lost (the API keeps none of it for an attach), and the CLI may write
// first (an MCP request at start). The line is "go", or the operator's MCP
// servers' configuration, which the launcher gives the CLI as descriptor
// 3: never in the Pod's spec, which whoever may read Pods reads. EOF
// instead means the bot went away.

// podName is a fresh Pod name for a thread: at most 63 characters.
func (r *Runner) podName(thread string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	inst := r.cfg.Instance
	if len(inst) > 24 {
		inst = Hash(inst)
	}
	return strings.ToLower(strings.Trim(strings.Map(dnsChar, "claudeops-"+inst+"-"+Hash(thread)+"-"+hex.EncodeToString(b)), "-"))
}

func dnsChar(c rune) rune {
	switch {
	case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		return c
	case c >= 'A' && c <= 'Z':
		return c - 'A' + 'a'
	}
	return '-'
}

// pod is the Pod of one session, with the work claim's subPaths m.
func (r *Runner) pod(name string, spec claudeproc.Spec, m mounts) *corev1.Pod {
	yes, no := true, false
	uid, gid := r.cfg.UID, r.cfg.GID
	grace := int64(gracePeriod)
	c := corev1.Container{
		Name:                     container,
		Image:                    cmp.Or(spec.Image, r.cfg.Image), // a channel's (Spec.Image), else the runner's
		Command:                  []string{"/bin/sh", "-c", claudeproc.ImageLauncher},
		Args:                     append([]string{spec.Bin}, spec.Args...),
		WorkingDir:               spec.Dir,
		Env:                      podEnv(spec.Env, r.cfg.PlainEnv),
		Stdin:                    true,
		StdinOnce:                true, // EOF once the bot's attach ends: the CLI ends, the Pod is not reused
		Resources:                r.resources(m.probe),
		SecurityContext:          &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		VolumeMounts:             []corev1.VolumeMount{{Name: "home", MountPath: Home}},
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
	if m.work != "" {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "work", MountPath: spec.Dir, SubPath: m.work, ReadOnly: m.readOnly})
	}
	if m.home != "" {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "work", MountPath: path.Join(Home, ".claude"), SubPath: m.home, ReadOnly: m.readOnly})
	}
	volumes := []corev1.Volume{
		{Name: "home", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "work", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: r.cfg.WorkClaim}}},
	}
	for i, e := range m.extra {
		if !e.empty {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "work", MountPath: e.path, SubPath: e.sub, ReadOnly: e.readOnly || m.readOnly})
			continue
		}
		// The container's alone: what it holds on the claim stays unseen.
		name := fmt.Sprintf("empty-%d", i)
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: e.path, ReadOnly: e.readOnly})
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &emptyLimit}}})
	}
	if r.cfg.Secret != "" {
		c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: r.cfg.Secret}}}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: r.cfg.Namespace,
			Labels: map[string]string{
				LabelInstance: r.cfg.Instance, LabelManagedBy: "claudeops",
				LabelChannel: Hash(spec.Session.Channel), LabelThread: Hash(spec.Session.Thread),
			},
			Annotations: map[string]string{AnnotationChannel: spec.Session.Channel, AnnotationThread: spec.Session.Thread},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			HostNetwork:                   r.cfg.HostNetwork,
			TerminationGracePeriodSeconds: &grace,
			// The pause process is PID 1: it reaps what the CLI's tools
			// leave, and the CLI, not PID 1, ends on SIGTERM.
			ShareProcessNamespace: &yes,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &gid,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{c},
			Volumes:    volumes,
		},
	}
}

// emptyLimit bounds an empty mount (mount points) or a scratch one (a
// session's reflogs, say).
var emptyLimit = resource.MustParse("64Mi")

// probeCPU and probeMemory are what a version probe's Pod requests.
var probeCPU, probeMemory = resource.MustParse("10m"), resource.MustParse("64Mi")

func (r *Runner) resources(probe bool) corev1.ResourceRequirements {
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	set := func(l corev1.ResourceList, n corev1.ResourceName, q resource.Quantity) {
		if q.Sign() > 0 {
			l[n] = q
		}
	}
	cpu, mem := r.cfg.CPURequest, r.cfg.MemoryRequest
	if probe {
		cpu, mem = lesser(cpu, probeCPU), lesser(mem, probeMemory)
	}
	set(req, corev1.ResourceCPU, cpu)
	set(req, corev1.ResourceMemory, mem)
	set(lim, corev1.ResourceCPU, r.cfg.CPULimit)
	set(lim, corev1.ResourceMemory, r.cfg.MemoryLimit)
	return corev1.ResourceRequirements{Requests: req, Limits: lim}
}

// lesser is the smaller of a (0: none) and b.
func lesser(a, b resource.Quantity) resource.Quantity {
	if a.Sign() > 0 && a.Cmp(b) < 0 {
		return a
	}
	return b
}

// hostPathEnv are variables that name places on the bot's host: in a Pod
// they would name nothing, or something else.
var hostPathEnv = []string{"PATH", "HOME", "TMPDIR", "CLAUDE_CONFIG_DIR", "SHELL", "PWD"}

// podEnv is the CLI's environment in a Pod: env without the variables
// naming host paths (PATH comes from the image) and without credentials
// (they come from the operator's Secret), with HOME and CLAUDE_CONFIG_DIR
// the Pod's. A Pod's spec is readable by whoever may read Pods.
func podEnv(env, plain []string) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(env)+2)
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if slices.Contains(hostPathEnv, name) || Credential(name, val) && !slices.Contains(plain, name) {
			continue
		}
		out = append(out, corev1.EnvVar{Name: name, Value: val})
	}
	return append(out,
		corev1.EnvVar{Name: "HOME", Value: Home},
		corev1.EnvVar{Name: "CLAUDE_CONFIG_DIR", Value: path.Join(Home, ".claude")})
}
