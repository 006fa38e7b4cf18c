// Package testmcp is, for tests, a tiny MCP server and the marks it
// leaves: the oracle of whether an operator's MCP server started, and
// which of its tool calls ran. Over stdio it is a program built with the
// go tool (cmd/testmcp, Build); over http a handler on loopback (HTTP).
// Both speak proto.
package testmcp

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Tool is the server's one tool; the CLI names it mcp__<server>__touch.
const Tool = "touch"

// TokenEnv is the variable whose value the server writes in its start mark.
const TokenEnv = "TESTMCP_TOKEN"

// Build compiles the server into dir (where the runner under test can
// see it: a sandbox hides the host's /tmp, a container the host's files)
// and returns its path. The go
// tool's cache makes every build after the first a link.
func Build(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "testmcp")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/claudeops/claudeops/internal/testmcp/cmd/testmcp")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static: it runs in a runner's image too
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build testmcp: %v\n%s", err, out)
	}
	return bin
}

// Started reports whether the server started with marks as its -marks
// directory, and the token it was given.
func Started(t testing.TB, marks string) (bool, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(marks, "started"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return true, string(b)
}

// Called lists the names its tool calls were made with, in order.
func Called(t testing.TB, marks string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(marks, "called"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}
