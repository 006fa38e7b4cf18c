//go:build !nokubernetes

package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestKubernetesRunnerConfig: the runner's settings are read, defaulted
// and checked with the rest of the configuration, every problem at once.
func TestKubernetesRunnerConfig(t *testing.T) {
	claim := t.TempDir()
	base := []string{
		"CLAUDEOPS_RUNNER=kubernetes", "CLAUDEOPS_STATE_DIR=" + t.TempDir(),
		"CLAUDEOPS_RUNNER_IMAGE=claude:1", "CLAUDEOPS_RUNNER_USER=1000:1000",
		"CLAUDEOPS_KUBERNETES_NAMESPACE=team", "CLAUDEOPS_KUBERNETES_CLAIM=work",
		"CLAUDEOPS_KUBERNETES_CLAIM_PATH=" + claim,
		"CLAUDEOPS_WORKDIR=" + filepath.Join(claim, "default"), "CLAUDEOPS_WORKSPACES=" + filepath.Join(claim, "ws"),
	}
	tests := []struct {
		name    string
		env     []string
		wantErr []string
	}{
		{"all set", nil, nil},
		{"missing, all told", []string{"CLAUDEOPS_RUNNER_IMAGE=", "CLAUDEOPS_KUBERNETES_NAMESPACE=", "CLAUDEOPS_KUBERNETES_CLAIM=", "CLAUDEOPS_KUBERNETES_CLAIM_PATH="},
			[]string{"CLAUDEOPS_RUNNER_IMAGE is required", "CLAUDEOPS_KUBERNETES_NAMESPACE", "CLAUDEOPS_KUBERNETES_CLAIM ", "CLAUDEOPS_KUBERNETES_CLAIM_PATH"}},
		{"root", []string{"CLAUDEOPS_RUNNER_USER=0:0"}, []string{"CLAUDEOPS_RUNNER_USER 0:0"}},
		{"bad quantities", []string{"CLAUDEOPS_KUBERNETES_CPU_REQUEST=lots", "CLAUDEOPS_KUBERNETES_MEMORY_REQUEST=-1Gi", "CLAUDEOPS_RUNNER_MEMORY=1m"},
			[]string{"CLAUDEOPS_KUBERNETES_CPU_REQUEST", "CLAUDEOPS_KUBERNETES_MEMORY_REQUEST", "CLAUDEOPS_RUNNER_MEMORY"}},
		{"request over limit", []string{"CLAUDEOPS_KUBERNETES_MEMORY_REQUEST=4Gi", "CLAUDEOPS_RUNNER_MEMORY=2g"}, []string{"CLAUDEOPS_KUBERNETES_MEMORY_REQUEST 4Gi: more than the limit"}},
		{"workdir off the claim", []string{"CLAUDEOPS_WORKDIR=" + t.TempDir()}, []string{"CLAUDEOPS_WORKDIR"}},
		{"workdir is the claim", []string{"CLAUDEOPS_WORKDIR=" + claim}, []string{"CLAUDEOPS_WORKDIR"}},
		{"workspaces hold the CLI homes", []string{"CLAUDEOPS_WORKSPACES=" + filepath.Join(claim, "claude-homes", "x")}, []string{"CLAUDEOPS_WORKSPACES"}},
		{"secret name", []string{"CLAUDEOPS_KUBERNETES_SECRET=Model_Key"}, []string{"CLAUDEOPS_KUBERNETES_SECRET"}},
		// A credential passed on would be in every Pod's spec: refused,
		// by name (never by value), unless the operator says it is none.
		{"credential passed on", []string{"CLAUDEOPS_CLAUDE_ENV=DEPLOY,CI_*", "DEPLOY=ghp_" + strings.Repeat("aB3", 12), "CI_NOTE=plain", "CI_HOOK=xoxb-1-2-" + strings.Repeat("x", 12)},
			[]string{"passes CI_HOOK, DEPLOY, which looks like a credential"}},
		{"marked plain", []string{"CLAUDEOPS_CLAUDE_ENV=BUILD_ID", "BUILD_ID=q8Zr2LmN4xVb7TpK1sWd9YhJ3cFg", "CLAUDEOPS_KUBERNETES_PLAIN_ENV=BUILD_ID"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(append(append([]string{}, base...), tt.env...))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				kc, bad := c.Runner.Kubernetes.Config(instanceName(c.StateDir))
				if len(bad) > 0 {
					t.Fatal(bad)
				}
				if kc.UID != 1000 || kc.Namespace != "team" || kc.MemoryLimit.String() != "2Gi" || kc.CPULimit.String() != "2" ||
					kc.CPURequest.String() != "500m" || kc.MemoryRequest.String() != "512Mi" || kc.StartTimeout.String() != "5m0s" {
					t.Errorf("config = %+v", kc)
				}
				if got := botConfig(c, nil, nil).ProtectedPaths; !slices.Contains(got, filepath.Join(claim, "claude-homes")) {
					t.Errorf("protected paths %q lack the claim's CLI homes", got)
				}
				return
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
			if err != nil && (strings.Contains(err.Error(), "ghp_") || strings.Contains(err.Error(), "xoxb-")) {
				t.Errorf("the error shows a credential's value: %v", err)
			}
		})
	}
}
