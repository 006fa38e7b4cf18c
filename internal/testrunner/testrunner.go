// Package testrunner gives the real-CLI test harnesses the runner
// CLAUDEOPS_TEST_RUNNER names (testcli.Runner), so that the same tests run
// with claude as a child process and inside the sandbox.
package testrunner

import (
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/testcli"
)

// Runner is the runner for a harness whose bot keeps its state in the
// paths of hide; the sandbox's homes go under base. Nil means the
// default, a local child process.
func Runner(t testing.TB, base string, hide ...string) claudeproc.Runner {
	t.Helper()
	if testcli.Runner(t) != "sandbox" {
		return nil
	}
	testcli.Bwrap(t)
	return claudeproc.Sandbox{HomeBase: filepath.Join(base, "sandbox-homes"), Hide: hide}
}

// Env is what selects the same runner in the environment of a bot run as
// a process (cmd/claudeops); the sandbox's homes go under base, so that
// its claude processes carry HOME=<base>/… .
func Env(t testing.TB, base string) []string {
	t.Helper()
	if testcli.Runner(t) != "sandbox" {
		return nil
	}
	testcli.Bwrap(t)
	return []string{"CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_SANDBOX_HOMES=" + filepath.Join(base, "sandbox-homes")}
}
