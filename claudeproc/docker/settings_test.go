package docker

import (
	"strings"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
)

// TestSettings: the operator's settings become the runner's Config, and
// every complaint names the variable at fault, all at once; a limit of 0
// is a mistake, not the default.
func TestSettings(t *testing.T) {
	ok := Settings{Image: "claude:1", Network: "bridge", Memory: "512m", CPUs: 1.5, Pids: 100, User: "1000:1000"}
	c, bad := ok.Config("a1b2")
	if len(bad) > 0 || c.Memory != 512<<20 || c.CPUs != 1.5 || c.Pids != 100 || c.User != "1000:1000" || c.Instance != "a1b2" {
		t.Fatalf("config %+v, %q", c, bad)
	}
	tests := []struct {
		name string
		s    func(s Settings) Settings
		want []string // one substring per problem, in order
	}{
		{"all well", func(s Settings) Settings { return s }, nil},
		{"no image", func(s Settings) Settings { s.Image = ""; return s }, []string{"CLAUDEOPS_RUNNER_IMAGE is required"}},
		{"bad values", func(s Settings) Settings {
			s.Memory, s.Network, s.User, s.Pids = "lots", "container:x", "root", 1
			return s
		}, []string{"CLAUDEOPS_RUNNER_MEMORY \"lots\"", "CLAUDEOPS_RUNNER_NETWORK", "CLAUDEOPS_RUNNER_USER", "CLAUDEOPS_RUNNER_MEMORY", "CLAUDEOPS_RUNNER_PIDS 1"}},
		{"zeros", func(s Settings) Settings { s.CPUs, s.Pids, s.Memory = 0, 0, "0"; return s },
			[]string{"CLAUDEOPS_RUNNER_CPUS: want a number of CPUs above 0", "CLAUDEOPS_RUNNER_PIDS: want a whole number", "CLAUDEOPS_RUNNER_MEMORY: want a size of at least 64m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.s(ok).Check(claudeproc.Host{Instance: "a1b2"})
			if len(got) != len(tt.want) {
				t.Fatalf("problems %+v, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				line := got[i].Want
				if got[i].Var != "" {
					line = got[i].Var + ": " + line
				}
				if !strings.Contains(line, w) {
					t.Errorf("problem %d %q lacks %q", i, line, w)
				}
			}
		})
	}
}
