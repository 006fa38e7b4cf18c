// Command realclitests prints the real-CLI tests of the module in the
// current directory (testcli.FindRealTests) for scripts/test, on one line:
// a -run pattern, then the package directories that hold them, e.g.
//
//	^(TestConsoleApprovals|TestRealCLIStreamedText)$ ./claudeproc ./cmd/claudeops
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/claudeops/claudeops/internal/testcli"
)

func main() {
	tests, err := testcli.FindRealTests(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "realclitests:", err)
		os.Exit(1)
	}
	if len(tests.Packages()) == 0 {
		fmt.Fprintln(os.Stderr, "realclitests: no test calls testcli.Bin")
		os.Exit(1)
	}
	fmt.Println(tests.Pattern(), strings.Join(tests.Packages(), " "))
}
