package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/testcli"
)

// TestDefaultRunner: without CLAUDEOPS_RUNNER the start chooses the
// sandbox where bubblewrap works (the real one, asked to make its
// namespaces), else local with a warning that says what that means and
// how to have the sandbox or to silence it. A runner that is set always
// wins, the sandbox without bubblewrap included: that start is refused.
func TestDefaultRunner(t *testing.T) {
	bwrap := testcli.Bwrap(t)
	dir := t.TempDir()
	broken := filepath.Join(dir, "bwrap-without-namespaces")
	// What bwrap says where the host forbids user namespaces (a
	// container's seccomp profile, a hardened kernel).
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-bwrap")
	tests := []struct {
		name    string
		env     []string
		kind    string
		why     string   // in the reason /readyz shows
		warning []string // each in the warning; none: no warning
		problem string   // a problem of the start's checks
	}{
		{"bubblewrap works", []string{"CLAUDEOPS_SANDBOX_BWRAP=" + bwrap}, "sandbox", "the default: bubblewrap works", nil, ""},
		{"no bubblewrap", []string{"CLAUDEOPS_SANDBOX_BWRAP=" + missing}, "local", "the default without a working bubblewrap (find bubblewrap",
			[]string{"not sandboxed", "can read and change everything", "apt-get install bubblewrap", "CLAUDEOPS_RUNNER=local"}, ""},
		{"bubblewrap cannot make namespaces", []string{"CLAUDEOPS_SANDBOX_BWRAP=" + broken}, "local", "No permissions to create new namespace",
			[]string{"not sandboxed", "No permissions to create new namespace", "apt-get install bubblewrap"}, ""},
		{"an empty CLAUDEOPS_RUNNER is the default", []string{"CLAUDEOPS_RUNNER=", "CLAUDEOPS_SANDBOX_BWRAP=" + bwrap}, "sandbox", "the default", nil, ""},
		{"local chosen knowingly", []string{"CLAUDEOPS_RUNNER=local", "CLAUDEOPS_SANDBOX_BWRAP=" + missing}, "local", "set by CLAUDEOPS_RUNNER", nil, ""},
		{"local set where bubblewrap works", []string{"CLAUDEOPS_RUNNER=local", "CLAUDEOPS_SANDBOX_BWRAP=" + bwrap}, "local", "set by CLAUDEOPS_RUNNER", nil, ""},
		{"the sandbox set without bubblewrap", []string{"CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_SANDBOX_BWRAP=" + missing}, "sandbox", "set by CLAUDEOPS_RUNNER", nil,
			"CLAUDEOPS_SANDBOX_BWRAP=" + missing + ": not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
				"CLAUDEOPS_STATE_DIR=" + t.TempDir(), "CLAUDEOPS_WORKDIR=" + t.TempDir(),
				"CLAUDEOPS_CLAUDE_BIN=" + fakeCLI(t, "2.1.330")}, tt.env...)
			c, err := loadConfig(env)
			if err != nil {
				t.Fatal(err)
			}
			warning := c.Runner.choose(t.Context())
			if c.Runner.Kind != tt.kind || !strings.Contains(c.Runner.why, tt.why) {
				t.Errorf("runner %q (%s), want %q (%s)", c.Runner.Kind, c.Runner.why, tt.kind, tt.why)
			}
			if (warning != "") != (tt.warning != nil) {
				t.Errorf("warning %q, want one: %v", warning, tt.warning != nil)
			}
			for _, w := range tt.warning {
				if !strings.Contains(warning, w) {
					t.Errorf("the warning lacks %q: %s", w, warning)
				}
			}
			var said []string
			bad, _ := startChecks(t.Context(), c, true)
			for _, p := range bad {
				said = append(said, p.line(c.raw))
			}
			all := strings.Join(said, "\n")
			if tt.problem == "" && all != "" || !strings.Contains(all, tt.problem) {
				t.Errorf("the start's problems:\n%s\nwant %q", all, tt.problem)
			}
		})
	}
}
