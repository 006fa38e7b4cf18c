package claudeproc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestOperatorMCPArgs: the operator's servers add one --mcp-config naming
// the pipe, never their configuration; plugin directories a --plugin-dir
// each; a session given neither gets neither flag.
func TestOperatorMCPArgs(t *testing.T) {
	srv := json.RawMessage(`{"command":"/bin/ops","env":{"TOKEN":"s3cret"}}`)
	tests := []struct {
		name      string
		opts      Options
		want, not []string
	}{
		{"none", Options{SDKMCPServers: []string{"claudeops"}, Guard: &Guard{}}, nil, []string{"/dev/fd/3", "--plugin-dir"}},
		{"servers", Options{MCPServers: map[string]json.RawMessage{"ops": srv}, Guard: &Guard{}},
			[]string{"--strict-mcp-config", "--mcp-config " + MCPConfigPath}, []string{"s3cret", "/bin/ops", "--plugin-dir"}},
		{"plugins unguarded", Options{PluginDirs: []string{"/srv/a", "/srv/b"}}, []string{"--plugin-dir /srv/a --plugin-dir /srv/b"}, []string{"/dev/fd/3"}},
		// Guarded, a plugin is never given whole (operatorplugins.go).
		{"plugins guarded", Options{PluginDirs: []string{"/srv/a"}, Guard: &Guard{}}, nil, []string{"--plugin-dir"}},
	}
	for _, tt := range tests {
		got := strings.Join(tt.opts.Args(), " ")
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: args %s\nlack %s", tt.name, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: args %s\nhave %s", tt.name, got, n)
			}
		}
	}
}

// otherRunner is a runner that cannot pass the configuration (a
// container's), or one that wraps such a runner.
type otherRunner struct{ Runner }

func (otherRunner) PassesMCPConfig() bool { return false }

// TestOperatorMCPRefused: Start refuses the servers a runner cannot pass
// and a server named like one the host serves, before anything runs.
func TestOperatorMCPRefused(t *testing.T) {
	srv := map[string]json.RawMessage{"ops": json.RawMessage(`{"command":"/bin/ops"}`)}
	for _, tt := range []struct {
		name string
		opts Options
		want string
	}{
		{"a runner without the pipe", Options{Bin: "/nonexistent/claude", MCPServers: srv, Runner: otherRunner{}}, "need a runner that can"},
		{"a wrapper that says no", Options{Bin: "/nonexistent/claude", MCPServers: srv, Runner: otherRunner{Local{}}}, "need a runner that can"},
		{"the host's name", Options{Bin: "/nonexistent/claude", SDKMCPServers: []string{"ops"}, MCPServers: srv}, `MCP server "ops": the name is the bot's own server's`},
		{"not JSON", Options{Bin: "/nonexistent/claude", MCPServers: map[string]json.RawMessage{"x": json.RawMessage(`{`)}}, `MCP server "x": not valid JSON`},
	} {
		_, err := Start(context.Background(), tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
