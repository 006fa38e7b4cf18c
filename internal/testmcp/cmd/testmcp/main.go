// Command testmcp is a tiny stdio MCP server for tests: newline-delimited
// JSON-RPC on stdin and stdout (internal/testmcp/proto). It leaves marks
// in the directory -marks names, the tests' oracle outside the bot:
// "started" when it starts (with the value of $TESTMCP_TOKEN, so a test
// sees the secret reached the server), and a line in "called" for each
// tools/call it ran.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/claudeops/claudeops/internal/testmcp/proto"
)

func main() {
	marks := flag.String("marks", "", "directory for the marks")
	flag.Parse()
	if err := os.WriteFile(filepath.Join(*marks, "started"), []byte(os.Getenv("TESTMCP_TOKEN")), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "testmcp:", err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req proto.Request
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification: nothing to answer
		}
		if out.Encode(proto.Answer(*marks, req)) != nil {
			return
		}
	}
}
