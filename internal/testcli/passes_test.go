package testcli

import (
	"slices"
	"testing"
)

// TestEndToEndAreRealCLITests: a renamed or removed test must not leave
// the passes quietly running less.
func TestEndToEndAreRealCLITests(t *testing.T) {
	all, err := FindRealTests(RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range all {
		names = append(names, ns...)
	}
	for _, n := range EndToEnd {
		if !slices.Contains(names, n) {
			t.Errorf("EndToEnd names %s, which is no real-CLI test of the tree", n)
		}
	}
	for _, dir := range cliPackages {
		if len(all[dir]) == 0 {
			t.Errorf("%s holds no real-CLI test", dir)
		}
	}
}

func TestPasses(t *testing.T) {
	r := RealTests{
		"./claudeproc":    {"TestRealCLIResume", "TestSandboxGit", "TestLocalHomePerThread"},
		"./bot":           {"TestConsoleApprovals", "TestConsoleSlashHostile", "TestTrustModes", "TestConsoleCost", "TestProtectedPlaceAsksDespiteRule"},
		"./cmd/claudeops": {"TestKill9MidTurnThenRestart", "TestMetricsConsole", "TestRepositoryInstructionsReachClaude"},
	}
	for _, c := range []struct {
		name string
		got  RealTests
		want RealTests
	}{
		{"minimum CLI", r.MinimumCLI(), RealTests{
			"./claudeproc":    {"TestRealCLIResume", "TestSandboxGit", "TestLocalHomePerThread"},
			"./bot":           {"TestConsoleApprovals", "TestConsoleSlashHostile", "TestTrustModes", "TestProtectedPlaceAsksDespiteRule"},
			"./cmd/claudeops": {"TestKill9MidTurnThenRestart", "TestRepositoryInstructionsReachClaude"},
		}},
		{"sandbox", r.Sandbox(), RealTests{
			"./claudeproc":    {"TestRealCLIResume"},
			"./bot":           {"TestConsoleApprovals", "TestTrustModes"},
			"./cmd/claudeops": {"TestKill9MidTurnThenRestart", "TestRepositoryInstructionsReachClaude"},
		}},
	} {
		if !equal(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func equal(a, b RealTests) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
