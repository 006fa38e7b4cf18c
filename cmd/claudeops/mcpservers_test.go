package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMCPServersChecks: the servers file is checked with the rest of the
// configuration, every problem listed and no secret shown; a runner whose
// CLI is in an image takes the servers too, but for an http one on the
// host's loopback that its sessions cannot reach.
func TestMCPServersChecks(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	file := func(body string) string {
		p := filepath.Join(t.TempDir(), "servers.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := filepath.Join(dir, "token")
	if err := os.WriteFile(secret, []byte("file-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := file(`{"mcpServers": {"ops": {"command": "/bin/true", "env": {"T": "inline-secret-1", "U": {"file": "` + secret + `"}}, "channels": ["*"]}}}`)
	planted := file(`{"mcpServers": {"ops": {"command": "` + work + `/bin/mcp"}}}`)
	loop := file(`{"mcpServers": {"web": {"type": "http", "url": "http://localhost:8931/mcp", "channels": ["*"]}}}`)
	bad := file(`{"mcpServers": {"claudeops": {"command": "x"}, "web": {"type": "http", "url": "nope", "headers": {"A": "inline-secret-2"}}}}`)
	for _, tt := range []struct {
		name string
		env  []string
		want []string
	}{
		{"a good file", []string{"CLAUDEOPS_MCP_SERVERS_FILE=" + good, "CLAUDEOPS_PLUGIN_DIRS=" + dir}, nil},
		{"every problem, with the others", []string{"CLAUDEOPS_MCP_SERVERS_FILE=" + bad, "CLAUDEOPS_PLUGIN_DIRS=rel", "CLAUDEOPS_IDLE_TIMEOUT=0"}, []string{
			"CLAUDEOPS_IDLE_TIMEOUT=0: want a duration above 0",
			`CLAUDEOPS_PLUGIN_DIRS: "rel" is not an absolute path of a directory`,
			bad + `: server "claudeops": the name is the bot's own server's`,
			bad + `: server "web": url: want the server's http or https URL`,
		}},
		{"programs where sessions write", []string{"CLAUDEOPS_MCP_SERVERS_FILE=" + planted, "CLAUDEOPS_PLUGIN_DIRS=" + work}, []string{
			work + "/bin/mcp lies in " + work + ", where sessions write",
			work + " lies in " + work + ", where sessions write",
		}},
		{"a missing file", []string{"CLAUDEOPS_MCP_SERVERS_FILE=/nonexistent/servers.json"}, []string{"/nonexistent/servers.json: open"}},
		// The launcher in the image gives the CLI the configuration
		// (claudeproc/docker TestMCPServersInContainer, claudeproc/kubernetes
		// TestPodMCPServers).
		{"a runner in an image", []string{"CLAUDEOPS_MCP_SERVERS_FILE=" + good, "CLAUDEOPS_PLUGIN_DIRS=" + dir, "CLAUDEOPS_RUNNER=docker", "CLAUDEOPS_RUNNER_IMAGE=img"}, nil},
		// A container has a loopback of its own: the host's is out of reach
		// but through the host's network.
		{"the host's loopback from a container", []string{"CLAUDEOPS_MCP_SERVERS_FILE=" + loop, "CLAUDEOPS_RUNNER=docker", "CLAUDEOPS_RUNNER_IMAGE=img"}, []string{
			`server "web": localhost:8931 is this host's loopback, which the docker runner's sessions do not share`,
		}},
		{"the host's loopback in the host's network", []string{"CLAUDEOPS_MCP_SERVERS_FILE=" + loop, "CLAUDEOPS_PLUGIN_DIRS=" + dir, "CLAUDEOPS_RUNNER=docker", "CLAUDEOPS_RUNNER_IMAGE=img", "CLAUDEOPS_RUNNER_NETWORK=host"}, nil},
		{"the host's loopback from the host", []string{"CLAUDEOPS_MCP_SERVERS_FILE=" + loop, "CLAUDEOPS_PLUGIN_DIRS=" + dir, "CLAUDEOPS_RUNNER=local"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"HOME=" + t.TempDir(), "CLAUDEOPS_WORKDIR=" + work}, tt.env...)
			c, err := loadConfig(env)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected problems:\n%v", err)
				}
				if len(c.mcp.Servers) != 1 || len(c.mcp.Plugins) != 1 {
					t.Errorf("loaded %+v", c.mcp)
				}
				// No session may read the file or its secrets: the sandbox
				// hides them, no rule lets a tool touch them.
				own := ownFiles(c)
				files := []string{c.Extensions.MCP.ServersFile}
				if files[0] == good {
					files = append(files, secret)
				}
				for _, f := range files {
					if !slices.Contains(own, f) {
						t.Errorf("%s is not among the bot's own files %v", f, own)
					}
				}
				return
			}
			wantProblemLines(t, err, tt.want)
			if strings.Contains(err.Error(), "inline-secret") {
				t.Errorf("a secret shown:\n%s", err)
			}
		})
	}
}

// wantProblemLines: err is a *configError whose lines are want's, one
// substring each, in order.
func wantProblemLines(t *testing.T, err error, want []string) {
	t.Helper()
	var ce *configError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v; want a *configError", err)
	}
	lines := ce.lines()
	if len(lines) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if i < len(lines) && !strings.Contains(lines[i], w) {
			t.Errorf("line %d %q lacks %q", i+1, lines[i], w)
		}
	}
}
