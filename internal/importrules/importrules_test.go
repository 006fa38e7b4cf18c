// Package importrules (tests only) holds the import rules docs/DESIGN.md
// states, as a test: which packages of this repository each package's
// production files may import, and which packages only some may import,
// each rule with its reason. `go list` gives the imports, with and without
// the goolm tag (adapters/matrix's crypto files differ). A package with no
// row fails the test: a new package states its place here, and in DESIGN.
package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/claudeops/claudeops"

// A place is one package's: the packages of this repository its
// production files may import (tests may import more), and why.
type place struct {
	pkg string
	may []string
	why string
}

// Leaves an extension may lean on besides the face.
var extensionMay = []string{"adapters", "bot/internal/text", "bot/thread", "claudeproc", "forge", "settings", "store", "workspace"}

const extensionWhy = "an extension sees a thread only through the face (bot/thread) and its leaves; never bot (which imports none of them) and never another extension (what one needs of another goes through the face or is connected by cmd)"

// places: every package of the module, by path below it.
var places = []place{
	{"cmd/claudeops", []string{"adapters", "adapters/console", "adapters/matrix", "adapters/slack", "bot", "bot/limits", "bot/mcpservers", "bot/mcptools", "bot/memory", "bot/reviews", "bot/runnerimage", "bot/scheduled", "bot/scopes", "bot/thread", "bot/workspaces", "claudeproc", "claudeproc/docker", "claudeproc/kubernetes", "forge", "health", "internal/fspath", "metrics", "scheduler", "settings", "store", "triggers", "workspace"},
		"the composition root wires every part; it imports no test helper"},

	{"bot", []string{"adapters", "adapters/outbox", "approvals", "bot/internal/text", "bot/mcptools", "bot/thread", "claudeproc", "internal/fspath", "settings", "store"},
		"the kernel knows the port, not a platform; no extension (cmd lists them in Config.Extensions), not the scheduler (its Runner interface is the bot), not metrics (its own Observer)"},
	{"bot/thread", []string{"adapters", "claudeproc", "settings", "store"},
		"the face names what a part sees (keys, records, events); the kernel implements it, so it never imports bot"},
	{"bot/thread/threadtest", []string{"adapters", "bot/thread", "settings", "store"}, "a fake of the face, for extensions' tests: no bot"},
	{"bot/limits", extensionMay, extensionWhy},
	{"bot/workspaces", extensionMay, extensionWhy},
	{"bot/scheduled", extensionMay, extensionWhy},
	{"bot/mcpservers", extensionMay, extensionWhy},
	{"bot/scopes", extensionMay, extensionWhy},
	{"bot/memory", extensionMay, extensionWhy},
	{"bot/reviews", extensionMay, extensionWhy},
	{"bot/runnerimage", extensionMay, extensionWhy},
	{"bot/internal/text", []string{"adapters"}, "the wording kernel and extensions share: a leaf beside the port (Visible)"},
	{"bot/internal/filegraph", nil, "a measuring command, of nobody's"},
	{"bot/mcptools", []string{"adapters", "internal/fspath"}, "the bot's MCP tools do no I/O but what they are given"},

	{"adapters", nil, "the port: the neutral types every side shares depend on no side"},
	{"adapters/console", []string{"adapters"}, "a concrete adapter knows the port only"},
	{"adapters/slack", []string{"adapters", "adapters/mdsplit", "adapters/outbox", "adapters/slack/slackmd"},
		"the port and the adapters' shared leaves; what it keeps between runs (CatchUpState) cmd keeps in the store"},
	{"adapters/matrix", []string{"adapters", "adapters/mdsplit", "adapters/outbox"},
		"the port and the adapters' shared leaves; what it keeps between runs (State) cmd keeps in the store"},
	{"adapters/outbox", []string{"adapters"}, "the adapters' mailroom: it knows the port, no platform"},
	{"adapters/mdsplit", nil, "a leaf the adapters share: text only"},
	{"adapters/slack/slackmd", nil, "a leaf: Slack's text, no I/O"},

	{"approvals", []string{"internal/fspath"}, "pure logic: no I/O, no clock, no chat"},
	{"claudeproc", []string{"internal/fspath", "internal/proc"}, "one CLI process and its protocol; it knows nothing of chat"},
	{"claudeproc/docker", []string{"claudeproc"}, "a runner is claudeproc's Runner, no more"},
	{"claudeproc/kubernetes", []string{"claudeproc", "internal/fspath"}, "a runner is claudeproc's Runner, no more"},
	{"scheduler", []string{"store"}, "runs prompts through its own Runner interface, not the bot's types"},
	{"triggers", []string{"settings", "store"}, "events start runs through its own Runner interface, not the bot's types"},
	{"store", nil, "durable records, no business rules"},
	{"settings", nil, "which value applies where, and why: a leaf that knows channels only by their keys"},
	{"workspace", []string{"internal/proc"}, "git worktrees; the bot's side is bot/workspaces; its git supervised as the CLI is (internal/proc)"},
	{"forge", nil, "a leaf: a forge's API through its client library, known to the rest only by its Forge contract"},
	{"metrics", nil, "the packages tell their own observer interfaces; cmd hands them the metrics"},
	{"health", []string{"adapters", "claudeproc"}, "sees the bot through small interfaces of its own"},
	{"internal/fspath", nil, "a production leaf of internal/"},
	{"internal/proc", nil, "a production leaf of internal/: the supervision of the bot's children, which claudeproc and workspace share"},

	{"internal/bashoracle", nil, "tests' helper"},
	{"internal/dbdamage", nil, "tests' helper: SQLite's file format, not the store's code"},
	{"internal/dendrite", []string{"internal/testcli", "internal/testserver"}, "tests' helper"},
	{"internal/giteatest", []string{"internal/testcli", "internal/testserver"}, "tests' helper: a real forge; its oracles read the REST API, not the forge package's SDK"},
	{"internal/fakeanthropic", nil, "tests' helper: a fake made from the real API's shapes, not from our types"},
	{"internal/fakeslack", nil, "tests' helper: a fake made from Slack's shapes, not from our adapter"},
	{"internal/fakegithub", []string{"internal/schemacheck"}, "tests' helper: a fake made from GitHub's published REST description, not from our forge client"},
	{"internal/schemacheck", nil, "tests' helper: a JSON value against a published schema"},
	{"internal/kubetest", nil, "tests' helper"},
	{"internal/mdtable", nil, "tests' helper: the documents' tables, for the tests that hold them to the code"},
	{"internal/permcompare", nil, "tests only"},
	{"internal/runnergit", []string{"claudeproc", "internal/fakeanthropic", "workspace"}, "tests' helper: git inside a runner's session, for each runner's tests"},
	{"internal/runnermcp", []string{"claudeproc", "internal/fakeanthropic", "internal/testmcp"}, "tests' helper: the operator's MCP servers inside a runner's session, for each runner's tests"},
	{"internal/importrules", nil, "tests only"},
	{"internal/smallfs", nil, "tests' helper: a real small file system that fills up or turns read-only"},
	{"internal/testcli", nil, "tests' helper"},
	{"internal/testserver", nil, "tests' helper: a test server's child process, shared by the harnesses that run one"},
	{"internal/testmcp", []string{"internal/testmcp/proto"}, "tests' helper: an MCP server of the tests' own (stdio, http), and its marks"},
	{"internal/testmcp/proto", nil, "the tests' MCP server's protocol"},
	{"internal/testmcp/cmd/testmcp", []string{"internal/testmcp/proto"}, "the tests' stdio MCP server"},
	{"internal/testkit", []string{"adapters"}, "tests' helper: what several packages' tests share (a clock, waits, output, golden files)"},
	{"internal/testcli/cmd/gotestsplit", nil, "scripts/test's helper"},
	{"internal/testcli/cmd/realclitests", []string{"internal/testcli"}, "scripts/test's helper"},
	{"internal/testrunner", []string{"claudeproc", "internal/testcli"}, "tests' helper"},
	{"deploy/kubernetes", nil, "manifests, and their tests"},
	{"docs", nil, "the documents, and the test that their links stay in the repository"},
}

// A guard names packages only some may import, whatever their places say.
type guard struct {
	pkg string   // a path, or a prefix ending in "/"
	by  []string // the only importers allowed
	why string
}

var guards = []guard{
	{"cmd/", nil, "nothing imports the composition root"},
	{"adapters/console", []string{"cmd/claudeops"}, "a concrete adapter is chosen by cmd alone"},
	{"adapters/slack", []string{"cmd/claudeops"}, "a concrete adapter is chosen by cmd alone"},
	{"adapters/matrix", []string{"cmd/claudeops"}, "a concrete adapter is chosen by cmd alone"},
	{"bot/limits", []string{"cmd/claudeops"}, "cmd builds the extensions and hands them to the bot"},
	{"bot/workspaces", []string{"cmd/claudeops"}, "cmd builds the extensions and hands them to the bot"},
	{"bot/scheduled", []string{"cmd/claudeops"}, "cmd builds the extensions and hands them to the bot"},
	{"bot/mcpservers", []string{"cmd/claudeops"}, "cmd builds the extensions and hands them to the bot"},
	{"bot/scopes", []string{"cmd/claudeops"}, "cmd builds the extensions and hands them to the bot"},
	{"bot/memory", []string{"cmd/claudeops"}, "cmd builds the extensions and hands them to the bot"},
	{"bot/reviews", []string{"cmd/claudeops"}, "cmd builds the extensions and hands them to the bot"},
	{"bot/runnerimage", []string{"cmd/claudeops"}, "cmd builds the extensions and hands them to the bot"},
	{"metrics", []string{"cmd/claudeops"}, "only cmd hands the metrics to the parts' observers"},
	{"health", []string{"cmd/claudeops"}, "only cmd serves the operational endpoints"},
	{"claudeproc/docker", []string{"cmd/claudeops"}, "a runner is chosen by cmd alone"},
	{"claudeproc/kubernetes", []string{"cmd/claudeops"}, "a runner is chosen by cmd alone"},
}

// violations says which of graph's imports (package → the module's
// packages it imports, paths below the module) break places or guards.
func violations(graph map[string][]string) []string {
	byPkg := map[string]place{}
	for _, p := range places {
		byPkg[p.pkg] = p
	}
	var out []string
	for pkg, imports := range graph {
		p, ok := byPkg[pkg]
		if !ok {
			out = append(out, fmt.Sprintf("%s has no place in the import rules: add its row (and its line in docs/DESIGN.md)", pkg))
			continue
		}
		for _, imp := range imports {
			if !slices.Contains(p.may, imp) {
				out = append(out, fmt.Sprintf("%s imports %s: %s", pkg, imp, p.why))
			}
			for _, g := range guards {
				if g.matches(imp) && !slices.Contains(g.by, pkg) {
					out = append(out, fmt.Sprintf("%s imports %s: %s", pkg, imp, g.why))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (g guard) matches(pkg string) bool {
	if strings.HasSuffix(g.pkg, "/") {
		return strings.HasPrefix(pkg, g.pkg)
	}
	return pkg == g.pkg
}

// TestImportRules holds the module's production imports to the rules,
// built with and without goolm.
func TestImportRules(t *testing.T) {
	for _, tags := range []string{"", "goolm"} {
		t.Run("tags="+tags, func(t *testing.T) {
			graph := listImports(t, tags)
			for _, v := range violations(graph) {
				t.Error(v)
			}
			for _, p := range places {
				if _, ok := graph[p.pkg]; !ok {
					t.Errorf("the rules name %s, which go list does not: remove its row", p.pkg)
				}
			}
		})
	}
}

// TestViolationsFound plants breaks of each kind of rule in a graph that
// keeps them, so that the check is seen to fail.
func TestViolationsFound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  string
	}{
		{"kernel imports an extension", map[string][]string{"bot": {"bot/limits"}}, "bot imports bot/limits"},
		{"kernel imports a concrete adapter", map[string][]string{"bot": {"adapters/slack"}}, "bot imports adapters/slack"},
		{"extension imports another", map[string][]string{"bot/limits": {"bot/workspaces"}}, "bot/limits imports bot/workspaces"},
		{"extension imports the kernel", map[string][]string{"bot/scheduled": {"bot"}}, "bot/scheduled imports bot"},
		{"leaf imports the port", map[string][]string{"store": {"adapters"}}, "store imports adapters"},
		{"production imports a test helper", map[string][]string{"claudeproc": {"internal/testcli"}}, "claudeproc imports internal/testcli"},
		{"only cmd imports metrics", map[string][]string{"scheduler": {"metrics"}}, "only cmd hands the metrics"},
		{"nothing imports cmd", map[string][]string{"health": {"cmd/claudeops"}}, "nothing imports the composition root"},
		{"a package with no place", map[string][]string{"bot/newthing": nil}, "bot/newthing has no place"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(violations(tc.graph), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("violations = %q, want one saying %q", got, tc.want)
			}
		})
	}
	clean := map[string][]string{}
	for _, p := range places {
		clean[p.pkg] = p.may
	}
	if v := violations(clean); len(v) > 0 {
		t.Errorf("every place importing what it may: violations %q, want none", v)
	}
}

// listImports is go list's answer for the module: each package's imports
// of the module's packages, paths below the module.
func listImports(t *testing.T, tags string) map[string][]string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "list", "-tags="+tags, "-json=ImportPath,Imports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		var own []string
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				own = append(own, rel)
			}
		}
		graph[strings.TrimPrefix(p.ImportPath, module+"/")] = own
	}
	return graph
}
