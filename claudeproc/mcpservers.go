package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
)

// The operator's MCP servers (Options.MCPServers): stdio or http servers
// the CLI starts or reaches itself, declared by the operator with their
// secrets (a stdio server's env, an http server's headers). Their
// configuration never goes on the command line (any process of the same
// user reads /proc/<pid>/cmdline) nor into the CLI's environment (its
// tools inherit it): the CLI reads it from a pipe, descriptor 3, named
// by --mcp-config /dev/fd/3 beside the SDK server's own --mcp-config.
// Once the CLI has read it the pipe is empty: a process that opens
// /proc/<pid>/fd/3 later reads nothing. Measured on 2.1.330 and 2.1.309:
// the two --mcp-config flags add up, --strict-mcp-config still keeps
// every other configuration out, the servers start after the first user
// message, and each of their tools is asked about (can_use_tool) as any
// tool is (mcpservers_realcli_test.go).
//
// A runner whose CLI is an image's (docker, kubernetes) cannot hand a
// descriptor into a container: it reads the pipe itself and writes the
// configuration as the first line of the CLI's stdin, to ImageLauncher,
// which gives it to the CLI as descriptor 3 through a here-document (a
// pipe in dash and busybox's ash), never a file, argv or environment.

// MCPConfigPath is where the CLI finds the operator's servers: the pipe
// the runner gives it as descriptor 3 (Spec.MCPConfig).
const MCPConfigPath = "/dev/fd/3"

// ConfigPasser is a Runner that gives the CLI Spec.MCPConfig as its
// descriptor 3. A runner that is not one cannot run a session with
// Options.MCPServers: Start refuses it.
type ConfigPasser interface {
	Runner
	PassesMCPConfig() bool
}

// PassesMCPConfig implements ConfigPasser: a local child inherits it.
func (Local) PassesMCPConfig() bool { return true }

// PassesMCPConfig implements ConfigPasser: bwrap hands its descriptors on.
func (Sandbox) PassesMCPConfig() bool { return true }

// operatorMCPConfig is the JSON the CLI reads from the pipe; it checks
// that no server takes the name of one the host serves itself.
func (o *Options) operatorMCPConfig() ([]byte, error) {
	names := make([]string, 0, len(o.MCPServers))
	for name, srv := range o.MCPServers {
		if slices.Contains(o.SDKMCPServers, name) {
			return nil, fmt.Errorf("MCP server %q: the name is the bot's own server's", name)
		}
		if !json.Valid(srv) {
			return nil, fmt.Errorf("MCP server %q: not valid JSON", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	b, err := json.Marshal(map[string]any{"mcpServers": o.MCPServers})
	if err != nil {
		return nil, fmt.Errorf("MCP servers %v: %w", names, err)
	}
	return b, nil
}

// mcpConfigPipe returns the read end of a pipe that holds o's operator
// servers (nil when there are none), for the runner to give the CLI. A
// goroutine writes the configuration and closes its end: it ends when the
// CLI has read it, or when every read end is closed (the CLI gone).
func (o *Options) mcpConfigPipe(runner Runner) (*os.File, error) {
	if len(o.MCPServers) == 0 {
		return nil, nil
	}
	if cp, ok := runner.(ConfigPasser); !ok || !cp.PassesMCPConfig() {
		return nil, errors.New("this runner cannot pass MCP servers' configuration to the CLI: operator MCP servers need a runner that can (local, sandbox, docker, kubernetes)")
	}
	data, err := o.operatorMCPConfig()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("MCP configuration pipe: %w", err)
	}
	go func() {
		_, _ = w.Write(data) // a CLI that never reads it is gone: EPIPE
		w.Close()
	}()
	return r, nil
}

// ImageLauncher is the `/bin/sh -c` script a runner in an image runs the
// CLI with, the CLI and its arguments after it ("$0" "$@"). It waits for
// the first line of its stdin (LauncherLine): "go" runs the CLI as it is;
// anything else is the operator's servers' configuration, which the CLI
// gets as descriptor 3 from a here-document. The line's value is expanded
// there once and never re-read as shell text (TestImageLauncherHostile,
// with dash). EOF first means the bot went away: nothing runs.
const ImageLauncher = `IFS= read -r line || exit 0
[ "$line" = go ] && exec "$0" "$@"
exec "$0" "$@" 3<<EOF
$line
EOF`

// launcherGo is the first line when the session has no operator servers.
const launcherGo = "go\n"

// maxMCPConfig bounds the configuration a runner reads from the pipe.
const maxMCPConfig = 1 << 20

// LauncherLine is the first line a runner in an image writes on
// ImageLauncher's stdin: "go", or spec.MCPConfig's content as one JSON
// line. It reads and closes spec.MCPConfig.
func LauncherLine(spec Spec) ([]byte, error) {
	if spec.MCPConfig == nil {
		return []byte(launcherGo), nil
	}
	defer spec.MCPConfig.Close()
	data, err := io.ReadAll(io.LimitReader(spec.MCPConfig, maxMCPConfig+1))
	if err != nil {
		return nil, fmt.Errorf("read the MCP servers' configuration: %w", err)
	}
	if len(data) > maxMCPConfig {
		return nil, fmt.Errorf("the MCP servers' configuration is over %d bytes", maxMCPConfig)
	}
	// Compact JSON holds no newline: the line ends where the value does.
	var line bytes.Buffer
	if err := json.Compact(&line, data); err != nil {
		return nil, fmt.Errorf("the MCP servers' configuration: %w", err)
	}
	line.WriteByte('\n')
	return line.Bytes(), nil
}
