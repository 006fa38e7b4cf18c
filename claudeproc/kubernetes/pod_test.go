package kubernetes

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/claudeops/claudeops/claudeproc"
)

func testConfig() Config {
	return Config{
		Namespace: "team", Image: "claude:1", Instance: "bot-1", UID: 1000, GID: 1000,
		WorkClaim: "work", WorkPath: "/work", MemoryLimit: resource.MustParse("2Gi"), MemoryRequest: resource.MustParse("512Mi"),
	}
}

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string // a complaint containing it; "" none
	}{
		{"ok", func(*Config) {}, ""},
		{"root", func(c *Config) { c.UID = 0 }, "user 0:1000"},
		{"no image", func(c *Config) { c.Image = "" }, "image is required"},
		{"namespace upper", func(c *Config) { c.Namespace = "Team" }, "namespace"},
		{"namespace path", func(c *Config) { c.Namespace = "../kube-system" }, "namespace"},
		{"instance space", func(c *Config) { c.Instance = "a b" }, "instance"},
		{"instance long", func(c *Config) { c.Instance = strings.Repeat("a", 64) }, "instance"},
		{"claim", func(c *Config) { c.WorkClaim = "" }, "claim"},
		{"claim path relative", func(c *Config) { c.WorkPath = "work" }, "claim_path"},
		{"claim path root", func(c *Config) { c.WorkPath = "/" }, "claim_path"},
		{"secret", func(c *Config) { c.Secret = "My_Secret" }, "secret"},
		{"request over limit", func(c *Config) { c.MemoryRequest = resource.MustParse("3Gi") }, "memory_request"},
		{"timeout", func(c *Config) { c.StartTimeout = -1 }, "start_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig()
			tc.mod(&c)
			bad := strings.Join(c.Check(), "\n")
			if tc.want == "" && bad != "" || tc.want != "" && !strings.Contains(bad, tc.want) {
				t.Errorf("Check() = %q, want one containing %q", bad, tc.want)
			}
		})
	}
}

// TestPodEnvKeepsCredentialsOut: a Pod's spec is readable by anyone who
// may read Pods, so no credential of the bot's is written into it, however
// the variable is named or the value is given.
func TestPodEnvKeepsCredentialsOut(t *testing.T) {
	secrets := map[string]string{
		"ANTHROPIC_API_KEY":                   "sk-ant-api-SECRET1",
		"ANTHROPIC_AUTH_TOKEN":                "SECRET2",
		"CLAUDE_CODE_OAUTH_TOKEN":             "SECRET3",
		"AWS_SECRET_ACCESS_KEY":               "SECRET4",
		"AWS_SESSION_TOKEN":                   "SECRET5",
		"HTTPS_PROXY":                         "http://user:SECRET6@proxy:3128",
		"https_proxy":                         "http://u:SECRET7@proxy:3128",
		"GOOGLE_APPLICATION_CREDENTIALS_JSON": "SECRET8",
		"ANTHROPIC_Api_Key":                   "SECRET9",
		"ANTHROPIC_CUSTOM_HEADERS":            "X-Org: SECRET10",
		"OTEL_EXPORTER_OTLP_HEADERS":          "x-honeycomb-team=SECRET11",
		"CLAUDE_CODE_EXTRA":                   "Authorization: Bearer SECRET12",
		"ANTHROPIC_MODEL":                     "sk-ant-SECRET13",
	}
	env := []string{"PATH=/host/bin", "HOME=/root", "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "LANG=C.UTF-8", "NO_PROXY=localhost"}
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	r := &Runner{cfg: testConfig()}
	pod := r.pod("p", claudeproc.Spec{Bin: "claude", Dir: "/work/t/x", Env: env, Session: claudeproc.Session{Channel: "c", Thread: "t"}}, mounts{work: "t/x", home: "h"})
	b, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range secrets {
		if strings.Contains(string(b), v) {
			t.Errorf("the Pod's spec holds %s's value", k)
		}
	}
	got := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		got[e.Name] = e.Value
	}
	for k, want := range map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "LANG": "C.UTF-8", "NO_PROXY": "localhost", "HOME": Home, "CLAUDE_CONFIG_DIR": Home + "/.claude"} {
		if got[k] != want {
			t.Errorf("env %s = %q, want %q", k, got[k], want)
		}
	}
	if _, ok := got["PATH"]; ok {
		t.Error("the host's PATH went into the Pod")
	}
	// What the operator marks as no credential goes in, as it is.
	r.cfg.PlainEnv = []string{"BUILD_ID"}
	pod = r.pod("p", claudeproc.Spec{Bin: "claude", Dir: "/work/t/x", Env: []string{"BUILD_ID=q8Zr2LmN4xVb7TpK1sWd9YhJ3cFg", "OTHER_ID=q8Zr2LmN4xVb7TpK1sWd9YhJ3cFh"},
		Session: claudeproc.Session{Channel: "c", Thread: "t"}}, mounts{work: "t/x", home: "h"})
	got = map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		got[e.Name] = e.Value
	}
	if got["BUILD_ID"] != "q8Zr2LmN4xVb7TpK1sWd9YhJ3cFg" || got["OTHER_ID"] != "" {
		t.Errorf("marked plain: BUILD_ID %q (want it), OTHER_ID %q (want none)", got["BUILD_ID"], got["OTHER_ID"])
	}
}

// TestPodSpec: what the API server will be asked for, before any cluster
// says what it made of it (the cluster tests look at that).
func TestPodSpec(t *testing.T) {
	r := &Runner{cfg: testConfig()}
	r.cfg.Secret = "model-creds"
	spec := claudeproc.Spec{Bin: "claude", Args: []string{"-p", "--verbose"}, Dir: "/work/trees/a b",
		Session: claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1700000000.000100"}}
	p := r.pod(r.podName(spec.Session.Thread), spec, mounts{work: "trees/a b", home: "claude-homes/bot-1/x"})
	if errs := validation.IsDNS1123Label(p.Name); len(errs) > 0 {
		t.Errorf("name %q: %v", p.Name, errs)
	}
	for k, v := range p.Labels {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label %s=%q: %v", k, v, errs)
		}
	}
	s := p.Spec
	c := s.Containers[0]
	switch {
	case s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken:
		t.Error("the service account token is mounted")
	case s.SecurityContext.RunAsNonRoot == nil || !*s.SecurityContext.RunAsNonRoot || *s.SecurityContext.RunAsUser != 1000:
		t.Error("not run as the non-root user")
	case c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation:
		t.Error("privilege escalation allowed")
	case len(c.SecurityContext.Capabilities.Drop) != 1 || c.SecurityContext.Capabilities.Drop[0] != "ALL":
		t.Error("capabilities kept")
	case s.EnableServiceLinks == nil || *s.EnableServiceLinks:
		t.Error("service links on")
	case s.RestartPolicy != "Never" || !c.StdinOnce || !c.Stdin:
		t.Error("restart policy or stdin")
	case c.EnvFrom[0].SecretRef.Name != "model-creds":
		t.Error("the Secret is not the environment")
	case c.Command[0] != "/bin/sh" || c.Args[0] != "claude" || c.Args[2] != "--verbose":
		t.Errorf("command %q %q", c.Command, c.Args)
	}
	if c.Resources.Limits.Memory().String() != "2Gi" || c.Resources.Requests.Memory().String() != "512Mi" {
		t.Errorf("resources %v", c.Resources)
	}
	var subs []string
	for _, m := range c.VolumeMounts {
		subs = append(subs, m.MountPath+"="+m.SubPath)
	}
	if got := strings.Join(subs, " "); got != "/home/claude= /work/trees/a b=trees/a b /home/claude/.claude=claude-homes/bot-1/x" {
		t.Errorf("mounts %s", got)
	}
}

// TestPodImage: a session's Pod runs the channel's image where the spec
// names one (Spec.Image), else the runner's.
func TestPodImage(t *testing.T) {
	r := &Runner{cfg: testConfig()}
	for _, tt := range []struct{ spec, want string }{{"", r.cfg.Image}, {"registry.example/infra:2", "registry.example/infra:2"}} {
		spec := claudeproc.Spec{Bin: "claude", Dir: "/work", Image: tt.spec, Session: claudeproc.Session{Channel: "slack/C1", Thread: "slack/C1/1.2"}}
		if got := r.pod(r.podName(spec.Session.Thread), spec, mounts{}).Spec.Containers[0].Image; got != tt.want {
			t.Errorf("spec image %q: the Pod's is %q, want %q", tt.spec, got, tt.want)
		}
	}
}

// TestHomeDirs: the CLI's state is per thread (per channel only when no
// thread is given) and per instance, below the claim's homes, and the
// path a Pod mounts is the one the bot makes and removes.
func TestHomeDirs(t *testing.T) {
	r, err := New(testConfig(), &rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(func() Config { c := testConfig(); c.Instance = "bot-2"; return c }(), &rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t1 := claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1.0"}
	t2 := claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/2.0"}
	ch := claudeproc.Session{Channel: "slack/T1/C1"}
	d1, s1 := r.homeDir(t1)
	d2, _ := r.homeDir(t2)
	dc, _ := r.homeDir(ch)
	do, _ := other.homeDir(t1)
	if d1 == d2 || d1 == dc || d1 == do {
		t.Errorf("homes not per thread and instance: %s %s %s %s", d1, d2, dc, do)
	}
	if d1 != filepath.Join(r.cfg.WorkPath, s1) || filepath.Dir(d1) != filepath.Join(r.cfg.Homes(), r.cfg.Instance) {
		t.Errorf("home %s, subPath %s, below %s", d1, s1, r.cfg.Homes())
	}
}

// TestWorkSubPath: only a directory below the claim's mount, and not one
// that holds every thread's CLI state, becomes a Pod's subPath.
func TestWorkSubPath(t *testing.T) {
	r, err := New(testConfig(), &rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		"/work/ch/1":                "ch/1",
		"/work/trees/x/../y":        "trees/y",
		"/work":                     "",
		"/work/":                    "",
		"/work2/x":                  "",
		"/":                         "",
		"/work/../etc":              "",
		"/work/claude-homes":        "",
		"/work/claude-homes/bot-1":  "",
		"/work/x/../claude-homes/a": "",
		"/other/work/x":             "",
	} {
		got, err := r.workSubPath(dir)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("workSubPath(%q) = %q, %v; want %q", dir, got, err, want)
		}
		// The built skills are shown where a mount can be: on the claim,
		// apart from the homes (elsewhere a session gets none).
		if r.CanMount(dir) != (want != "") {
			t.Errorf("CanMount(%q) = %v", dir, !(want != ""))
		}
	}
}

func TestCredential(t *testing.T) {
	for _, tc := range []struct {
		name, val string
		want      bool
	}{
		{"ANTHROPIC_API_KEY", "x", true},
		{"my_token", "x", true},
		{"HTTP_PROXY", "http://proxy:3128", false},
		{"HTTP_PROXY", "http://u:p@proxy:3128", true},
		{"ALL_PROXY", "socks5://u:p@proxy", true},
		{"ANTHROPIC_BASE_URL", "https://api.example", false},
		{"ANTHROPIC_MODEL", "claude-x", false},
		{"LANG", "C.UTF-8", false},
		{"OTEL_EXPORTER_OTLP_HEADERS", "a=b", true},
		{"ANTHROPIC_CUSTOM_HEADERS", "X-Org: acme", true},
		{"CLAUDE_CODE_X", "bearer abc", true},
		{"ANTHROPIC_SMALL_FAST_MODEL", "claude-haiku", false},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://otel.example:4318", false},
		// Common token shapes under innocent names (issue 24: 9 of 11
		// passed before), each generated, none real.
		{"DEPLOY", "ghp_" + strings.Repeat("aB3", 12), true},
		{"GH_CONFIG", "github_pat_11ABCDEFG0" + strings.Repeat("x", 40), true},
		{"GITLAB", "glpat-" + strings.Repeat("Ab1_", 5), true},
		{"NOTIFY", "xoxb-1234567890-1234567890-" + strings.Repeat("aZ", 12), true},
		{"APP", "xapp-1-A012345-" + strings.Repeat("9", 20), true},
		{"AWS_ACCESS", "AKIAIOSFODNN7EXAMPLE", true},
		{"MAPS", "AIza" + strings.Repeat("Sy0-", 9), true},
		{"REGISTRY", "npm_" + strings.Repeat("a1B", 12), true},
		{"UPLOAD", "pypi-AgEIcHlwaS5vcmc" + strings.Repeat("x", 30), true},
		{"HUB", "hf_" + strings.Repeat("Q1w", 11), true},
		{"PAYMENTS", "sk_live_" + strings.Repeat("4eC3", 6), true},
		{"OPENAI", "sk-proj-" + strings.Repeat("Tz9", 10), true},
		{"DO", "dop_v1_" + strings.Repeat("ab12", 16), true},
		{"DOCKERHUB", "dckr_pat_" + strings.Repeat("Xy7", 9), true},
		{"SESSIONDATA", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", true},
		{"CA", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", true},
		{"DATABASE_URL", "postgres://app:hunter2@db:5432/app", true},
		{"GENERIC", "q8Zr2LmN4xVb7TpK1sWd9YhJ3cFg", true},
		{"GH_PAT", "x", true},
		{"DB_PASS", "x", true},
		// Not credentials.
		{"COMMIT", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", false},
		{"TZ", "Europe/Berlin", false},
		{"GOFLAGS", "-mod=mod -trimpath", false},
		{"NODE_OPTIONS", "--max-old-space-size=4096", false},
		{"PAGER", "cat", false},
		{"DATABASE_URL", "postgres://db:5432/app", false},
		{"SENTENCE", "NothingSecretHereJustWords", false},
	} {
		if got := Credential(tc.name, tc.val); got != tc.want {
			t.Errorf("Credential(%q, %q) = %v", tc.name, tc.val, got)
		}
	}
}

func TestPodNameFits(t *testing.T) {
	r := &Runner{cfg: testConfig()}
	for _, inst := range []string{"a", "Bot_1.x", strings.Repeat("z", 63)} {
		r.cfg.Instance = inst
		for _, th := range []string{"", "console/main", strings.Repeat("é", 300)} {
			n := r.podName(th)
			if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
				t.Errorf("podName(%q) with instance %q = %q: %v", th, inst, n, errs)
			}
		}
	}
}

// TestPodExtraMounts: a session's Mounts become subPaths of the work claim
// at their own paths, read-only where asked, or emptyDirs of their own,
// parents first; one outside the claim, or in the CLI homes, is refused.
func TestPodExtraMounts(t *testing.T) {
	r := &Runner{cfg: testConfig()}
	spec := claudeproc.Spec{Bin: "claude", Dir: "/work/ws/trees/r/a", Session: claudeproc.Session{Channel: "console/c", Thread: "console/c/1"},
		Mounts: []claudeproc.Mount{{Path: "/work/ws/repos/r/worktrees/a", Access: claudeproc.ReadWrite},
			{Path: "/work/ws/repos/r/worktrees", Access: claudeproc.Empty}, {Path: "/work/ws/repos/r", Access: claudeproc.ReadOnly},
			{Path: "/work/ws/repos/r/hooks", Access: claudeproc.Empty}}}
	extra, err := r.extraMounts(spec.Mounts, spec.Dir)
	if err != nil {
		t.Fatal(err)
	}
	p := r.pod("p", spec, mounts{work: "ws/trees/r/a", extra: extra})
	var got []string
	for _, m := range p.Spec.Containers[0].VolumeMounts[2:] {
		got = append(got, fmt.Sprintf("%s %s=%s ro=%v", m.Name, m.MountPath, m.SubPath, m.ReadOnly))
	}
	// An empty mount is read-only but where mount points are made in it.
	want := []string{"work /work/ws/repos/r=ws/repos/r ro=true", "empty-1 /work/ws/repos/r/hooks= ro=true", "empty-2 /work/ws/repos/r/worktrees= ro=false",
		"work /work/ws/repos/r/worktrees/a=ws/repos/r/worktrees/a ro=false"}
	if !slices.Equal(got, want) {
		t.Errorf("mounts\n%q\nwant\n%q", got, want)
	}
	if v := p.Spec.Volumes[len(p.Spec.Volumes)-1]; v.Name != "empty-2" || v.EmptyDir == nil {
		t.Errorf("the empty mount's volume: %+v", v)
	}
	for _, bad := range []string{"/elsewhere/r", "/work/claude-homes/x", "/work"} {
		if _, err := r.extraMounts([]claudeproc.Mount{{Path: bad, Access: claudeproc.ReadOnly}}, spec.Dir); err == nil {
			t.Errorf("mount %s: not refused", bad)
		}
	}
}
