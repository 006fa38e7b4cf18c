// Command realclitests prints the real-CLI tests of the module in the
// current directory (testcli.FindRealTests) for scripts/test, on one line:
// a -run pattern, then the package directories that hold them, e.g.
//
//	^(TestConsoleApprovals|TestRealCLIStreamedText)$ ./claudeproc ./cmd/claudeops
//
// -pass picks a second pass's share of them: all (the default), minimum
// (RealTests.MinimumCLI: what the oldest supported CLI runs again) or
// sandbox (RealTests.Sandbox: what runs again in the sandbox runner).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/claudeops/claudeops/internal/testcli"
)

func main() {
	pass := flag.String("pass", "all", "all, minimum or sandbox")
	flag.Parse()
	tests, err := testcli.FindRealTests(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "realclitests:", err)
		os.Exit(1)
	}
	switch *pass {
	case "all":
	case "minimum":
		tests = tests.MinimumCLI()
	case "sandbox":
		tests = tests.Sandbox()
	default:
		fmt.Fprintf(os.Stderr, "realclitests: -pass %q: want all, minimum or sandbox\n", *pass)
		os.Exit(2)
	}
	if len(tests.Packages()) == 0 {
		fmt.Fprintln(os.Stderr, "realclitests: no test calls testcli.Bin")
		os.Exit(1)
	}
	fmt.Println(tests.Pattern(), strings.Join(tests.Packages(), " "))
}
