// Package testrunner gives the real-CLI test harnesses the runner
// CLAUDEOPS_TEST_RUNNER names (testcli.Runner), so that the same tests run
// with claude as a child process and inside the sandbox.
package testrunner

import (
	"path/filepath"
	"slices"
	"strings"
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
// its claude processes carry HOME=<base>/… . It always names the runner:
// the bot's own default depends on the host (the sandbox where bubblewrap
// works), and a pass must run the runner it says.
func Env(t testing.TB, base string) []string {
	t.Helper()
	if testcli.Runner(t) != "sandbox" {
		return []string{"CLAUDEOPS_RUNNER=local"}
	}
	testcli.Bwrap(t)
	return []string{"CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_SANDBOX_HOMES=" + filepath.Join(base, "sandbox-homes")}
}

// Explicit is env with the runner named, for every harness that starts
// the bot: env as it is when it names one, else with
// CLAUDEOPS_RUNNER=local, what the bot ran before its default depended on
// the host. CLAUDEOPS_RUNNER= with no value asks for the bot's own
// default: it is left out, for the tests of that default.
func Explicit(env []string) []string {
	const name = "CLAUDEOPS_RUNNER="
	if slices.Contains(env, name) {
		return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return kv == name })
	}
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name) }) {
		return env
	}
	return append(slices.Clip(env), name+"local")
}
