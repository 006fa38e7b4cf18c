package kubernetes

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
)

// TestSettings: the operator's settings become the runner's Config with
// the shared CLAUDEOPS_RUNNER_* limits; what sessions work in must lie on
// the claim, apart from the CLI's homes; a credential passed on is refused
// by name, never by value; the homes are the runner's while in use.
func TestSettings(t *testing.T) {
	claim := t.TempDir()
	ok := Settings{Image: "claude:1", Memory: "2g", CPUs: 2, User: "1000:1000", Namespace: "team", Claim: "work", ClaimPath: claim,
		CPURequest: "500m", MemoryRequest: "512Mi", StartTimeout: 5 * time.Minute}
	host := func(work string, env map[string]string, pass ...string) claudeproc.Host {
		return claudeproc.Host{Instance: "a1b2", Environ: env, ClaudeEnv: pass,
			WorkDirs: []claudeproc.Place{{Var: "CLAUDEOPS_WORKDIR", Path: work}}}
	}
	c, bad := ok.Config("a1b2")
	if len(bad) > 0 || c.Instance != "a1b2" || c.UID != 1000 || c.MemoryLimit.String() != "2Gi" || c.CPULimit.String() != "2" {
		t.Fatalf("config %+v, %q", c, bad)
	}
	secret := "ghp_" + strings.Repeat("aB3", 12)
	tests := []struct {
		name string
		s    func(s Settings) Settings
		h    claudeproc.Host
		want []string // one substring per problem, in order
	}{
		{"all well", nil, host(filepath.Join(claim, "work"), nil), nil},
		{"root, bad request", func(s Settings) Settings { s.User, s.CPURequest = "0:0", "lots"; return s }, host(filepath.Join(claim, "work"), nil),
			[]string{"CLAUDEOPS_KUBERNETES_CPU_REQUEST \"lots\"", "CLAUDEOPS_RUNNER_USER 0:0"}},
		{"work off the claim", nil, host(t.TempDir(), nil), []string{"CLAUDEOPS_WORKDIR: want a directory below CLAUDEOPS_KUBERNETES_CLAIM_PATH"}},
		{"work among the homes", nil, host(filepath.Join(claim, HomesDir, "x"), nil), []string{"CLAUDEOPS_WORKDIR"}},
		{"a credential passed on", nil, host(filepath.Join(claim, "work"), map[string]string{"DEPLOY": secret, "CI_NOTE": "plain"}, "DEPLOY", "CI_*"),
			[]string{"CLAUDEOPS_CLAUDE_ENV: passes DEPLOY, which looks like a credential"}},
		{"said plain", func(s Settings) Settings { s.PlainEnv = []string{"DEPLOY"}; return s },
			host(filepath.Join(claim, "work"), map[string]string{"DEPLOY": secret}, "DEPLOY"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			if tt.s != nil {
				s = tt.s(s)
			}
			got := s.Check(tt.h)
			if len(got) != len(tt.want) {
				t.Fatalf("problems %+v, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				line := got[i].Want
				if got[i].Var != "" {
					line = got[i].Var + ": " + line
				}
				if !strings.Contains(line, w) || strings.Contains(line, secret) {
					t.Errorf("problem %d %q: want %q, and no credential's value", i, line, w)
				}
			}
		})
	}
	if got := ok.OwnDirs(claudeproc.Host{}, true); !slices.Equal(got, []string{filepath.Join(claim, HomesDir)}) {
		t.Errorf("own dirs in use %q", got)
	}
	if got := ok.OwnDirs(claudeproc.Host{}, false); got != nil {
		t.Errorf("own dirs of another runner's settings %q", got)
	}
}
