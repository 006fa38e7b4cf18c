package testcli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// writeTree writes files (path → content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestFindRealTests(t *testing.T) {
	root := writeTree(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"a/a.go": "package a\n",
		"a/a_test.go": `package a

import (
	"os"
	"testing"

	cli "github.com/claudeops/claudeops/internal/testcli"
	"example.com/m/b"
)

type harness struct{ bin string }

func newHarness(t *testing.T) *harness { return &harness{} }
func (h *harness) start(t *testing.T)  { h.bin = cli.Bin(t) }
func helper(t *testing.T) string       { return cli.Bin(t) }
func deeper(t *testing.T) string       { return helper(t) }
func runWith(t *testing.T, f func(*testing.T) string) { f(t) }

var viaVar = func(t *testing.T) string { return deeper(t) }

func TestDirect(t *testing.T)     { cli.Bin(t) }
func TestHelpers(t *testing.T)    { deeper(t) }
func TestMethod(t *testing.T)     { newHarness(t).start(t) }
func TestAsValue(t *testing.T)    { runWith(t, helper) }
func TestVar(t *testing.T)        { viaVar(t) }
func TestEnv(t *testing.T)        { os.Getenv("CLAUDEOPS_TEST_CLAUDE_BIN") }
func TestOtherPkg(t *testing.T)   { b.NewCLI(t) }
func TestSubtest(t *testing.T)    { t.Run("x", func(t *testing.T) { helper(t) }) }
func TestPlain(t *testing.T)      { newHarness(t); b.Plain() }
func TestlowerIsNoTest(t *testing.T) { cli.Bin(t) }
func BenchmarkNot(b *testing.B)   {}
`,
		"b/b.go": `package b

import (
	"testing"

	"github.com/claudeops/claudeops/internal/testcli"
)

func NewCLI(t testing.TB) string { return inner(t) }
func inner(t testing.TB) string  { return testcli.Bin(t) }
func Plain()                     {}
`,
		"c/c_test.go": `package c

import "testing"

func TestNothingReal(t *testing.T) {}
`,
		"testdata/x/x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestIgnored(t *testing.T) { os.Getenv(\"CLAUDEOPS_TEST_CLAUDE_BIN\") }\n",
	})
	got, err := FindRealTests(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TestAsValue", "TestDirect", "TestEnv", "TestHelpers", "TestMethod", "TestOtherPkg", "TestSubtest", "TestVar"}
	if !slices.Equal(got["./a"], want) {
		t.Errorf("./a: %q, want %q", got["./a"], want)
	}
	if pk := got.Packages(); !slices.Equal(pk, []string{"./a"}) {
		t.Errorf("packages %q", pk)
	}
	re := regexp.MustCompile(got.Pattern())
	for _, name := range want {
		if !re.MatchString(name) {
			t.Errorf("pattern %q does not match %s", got.Pattern(), name)
		}
	}
	for _, name := range []string{"TestPlain", "TestDirectly", "TestNothingReal", "XTestDirect"} {
		if re.MatchString(name) {
			t.Errorf("pattern %q matches %s", got.Pattern(), name)
		}
	}
}

// TestFindRealTestsHere: on this module, known real-CLI tests are found in
// their packages and known others are not.
func TestFindRealTestsHere(t *testing.T) {
	got, err := FindRealTests(RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, name string
		real      bool
	}{
		{"./claudeproc", "TestRealCLIStreamedText", true},
		{"./claudeproc", "TestParseVersionAndClassify", false},
		{"./cmd/claudeops", "TestVersionCommandRealCLI", true},
		{"./cmd/claudeops", "TestVersionPinsAgree", false},
		{"./internal/fakeanthropic", "TestRealCLISmoke", true},
		{"./internal/testcli", "TestFindRealTests", false},
	} {
		if slices.Contains(got[c.dir], c.name) != c.real {
			t.Errorf("%s %s: real-CLI test = %v, want %v", c.dir, c.name, !c.real, c.real)
		}
	}
}
