// Package testcli finds the Claude Code CLI that scripts/test installs, for
// tests that run the real CLI: the pinned one, or whichever version
// CLAUDEOPS_TEST_CLAUDE_BIN names (scripts/test runs the real-CLI tests
// with several). Such a test asserts what BinVersion reports, never the pin.
//
// Files: testcli.go (Bin, BinVersion, RepoRoot, the Runner and bwrap the
// tests use), realtests.go (FindRealTests: the tests that reach Bin, found
// in the source, which scripts/test runs with each CLI version; used by
// cmd/realclitests), passes.go (the shares of them a second pass runs
// again: MinimumCLI for the oldest supported CLI, Sandbox for the sandbox
// runner, both with the EndToEnd list). cmd/gotestsplit runs go test
// -json, printing what go test would, lists the tests that skipped for a
// setup not ready yet (the Docker images, the cluster), which scripts/test
// runs again once it is, and names the tests that took over a minute.
package testcli
