package testcli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Version is the pinned CLI version: the one scripts/test installs first
// and Bin falls back to.
const Version = "2.1.332"

// Bin returns the path of the CLI under test. It uses CLAUDEOPS_TEST_CLAUDE_BIN,
// else the pinned copy scripts/test caches in <repo>/.cache. When neither exists
// the test is skipped, unless CLAUDEOPS_REQUIRE_CLI=1 (set by scripts/test
// and CI), where a missing CLI fails the test instead.
func Bin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CLAUDEOPS_TEST_CLAUDE_BIN"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("CLAUDEOPS_TEST_CLAUDE_BIN=%s: %v", p, err)
		}
		return p
	}
	if root := RepoRoot(); root != "" {
		p := filepath.Join(root, ".cache", "claude-cli-"+Version, "node_modules", ".bin", "claude")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CLAUDEOPS_REQUIRE_CLI") == "1" {
		t.Fatal("the pinned Claude Code CLI is not installed: run scripts/test")
	}
	t.Skip("the pinned Claude Code CLI is not installed (scripts/test installs it)")
	return ""
}

var (
	versionsMu sync.Mutex
	versions   = map[string]string{} // bin → what BinVersion found
	versionRE  = regexp.MustCompile(`^(\d+\.\d+\.\d+) `)
)

// BinVersion is the version bin reports: the number `bin --version` prints
// first ("2.1.302" of "2.1.302 (Claude Code)"), read here rather than
// through claudeproc so that it can be the oracle of claudeproc's tests. It
// fails the test when bin does not run or prints no version.
func BinVersion(t testing.TB, bin string) string {
	t.Helper()
	versionsMu.Lock()
	defer versionsMu.Unlock()
	if v, ok := versions[bin]; ok {
		return v
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	m := versionRE.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		t.Fatalf("%s --version printed %q: no version", bin, out)
	}
	versions[bin] = m[1]
	return m[1]
}

// RepoRoot is the directory of go.mod above the working directory (a
// test's package directory), where scripts/test keeps .cache; "" if none.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Runner names the runner the real-CLI tests start claude with, from
// CLAUDEOPS_TEST_RUNNER: "local" (the default: a child process) or
// "sandbox" (bubblewrap); scripts/test runs a subset of the tests under
// each. A test about one runner sets its own and ignores this.
func Runner(t testing.TB) string {
	t.Helper()
	switch r := os.Getenv("CLAUDEOPS_TEST_RUNNER"); r {
	case "", "local":
		return "local"
	case "sandbox":
		return r
	default:
		t.Fatalf("CLAUDEOPS_TEST_RUNNER=%q: want local or sandbox", r)
		return ""
	}
}

// Bwrap returns the path of bubblewrap, for tests of the sandbox runner.
// When it is missing the test is skipped, unless CLAUDEOPS_REQUIRE_BWRAP=1
// (set by scripts/test, which installs it), where it fails.
func Bwrap(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("bwrap")
	if err == nil {
		return p
	}
	if os.Getenv("CLAUDEOPS_REQUIRE_BWRAP") == "1" {
		t.Fatal("bubblewrap (bwrap) is not installed: run scripts/test")
	}
	t.Skip("bubblewrap (bwrap) is not installed (scripts/test installs it)")
	return ""
}
