package main

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/claudeops/claudeops/bot/mcpservers"
	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/internal/fspath"
)

// mcpChecks loads the operator's MCP servers and plugin directories
// (bot/mcpservers) into c, every problem of the file listed. Every
// runner gives the CLI the servers' configuration on its descriptor 3
// (claudeproc.ConfigPasser), never on a command line or in an environment.
func (c *config) mcpChecks() []problem {
	m := &c.Extensions.MCP
	m.Reserved = []string{mcptools.ServerName}
	cat, err := mcpservers.Load(*m)
	c.mcp = cat
	var bad []problem
	if err != nil {
		bad = asProblems(strings.Split(err.Error(), "\n"))
	}
	bad = append(bad, c.mcpProgramChecks(cat)...)
	return append(bad, c.mcpLoopbackChecks(cat)...)
}

// loopbackSharer is a runner whose sessions may or may not share the
// bot host's loopback (docker's host network, a Pod in the node's).
type loopbackSharer interface{ SharesHostLoopback() bool }

// mcpLoopbackChecks: an http server on the host's loopback is out of
// reach of a CLI in a container or Pod that has a loopback of its own.
func (c *config) mcpLoopbackChecks(cat *mcpservers.Catalog) []problem {
	k := c.Runner.inUse()
	if k == nil || !k.ImageCLI() {
		return nil
	}
	if ls, ok := k.(loopbackSharer); ok && ls.SharesHostLoopback() {
		return nil
	}
	var bad []problem
	urls := cat.URLs()
	names := slices.Sorted(maps.Keys(urls))
	for _, name := range names {
		if u, err := url.Parse(urls[name]); err == nil && isLoopback(u.Hostname()) {
			bad = append(bad, problem{name: "CLAUDEOPS_MCP_SERVERS_FILE", want: fmt.Sprintf(
				"server %q: %s is this host's loopback, which the %s runner's sessions do not share: give an address their container reaches", name, u.Host, k.Name())})
		}
	}
	return bad
}

// isLoopback: localhost, or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mcpProgramChecks: a stdio server's program and a plugin directory come
// with the operator's trust (a server gets its secrets; a plugin's skills
// and agents reach the model, and an unguarded session would run its
// hooks), so none may lie where sessions write: the working directories.
func (c *config) mcpProgramChecks(cat *mcpservers.Catalog) []problem {
	var bad []problem
	for _, p := range cat.Programs() {
		for _, dir := range []string{c.Bot.Workdir, c.Workspaces} {
			if dir == "" {
				continue
			}
			if fspath.Within(resolved(p), resolved(dir)) {
				bad = append(bad, problem{want: fmt.Sprintf("CLAUDEOPS_MCP_SERVERS_FILE, CLAUDEOPS_PLUGIN_DIRS: %s lies in %s, where sessions write: a session could change what runs with the operator's trust", p, dir)})
				break
			}
		}
	}
	return bad
}

// resolved is p absolute, its symlinks resolved where it exists.
func resolved(p string) string {
	p = absPath(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
