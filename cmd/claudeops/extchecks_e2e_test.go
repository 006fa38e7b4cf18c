package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestSettingChecksBuilt: the built bot gives the resolver the extensions'
// checks. With the local runner and a servers file of one server, `set mcp`
// refuses a name the file does not list and takes one it does, and `set
// image` is refused (the runner has no image); nothing refused is stored.
func TestSettingChecksBuilt(t *testing.T) {
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(servers, []byte(`{"mcpServers": {"ops": {"command": "/bin/true"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"CLAUDEOPS_STATE_DIR=" + filepath.Join(dir, "state"), "CLAUDEOPS_CLAUDE_BIN=" + versionOnlyCLI(t, dir, "2.1.330"),
		"CLAUDEOPS_RUNNER=local", "CLAUDEOPS_MCP_SERVERS_FILE=" + servers}
	q := regexp.QuoteMeta

	b := startBotProc(t, env)
	b.say("set mcp nosuch")
	b.expect(q(`Nothing changed: there is no MCP server "nosuch" in the bot's configuration`))
	b.say("set image registry.example/infra:1")
	b.expect(q("Nothing changed: the local runner has no image: sessions here run on the bot's host."))
	b.say("set mcp ops")
	b.expect(q("mcp is `ops` at channel console/console."))
	b.say("mcp")
	b.expect(q("`ops` (the channel's settings: channel console/console, set in chat by operator on "))
	if err := b.endInput(time.Minute); err != nil {
		t.Fatalf("the bot's exit: %v", err)
	}
}
