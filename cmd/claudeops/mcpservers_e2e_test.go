package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testmcp"
)

// TestConsoleOperatorMCPServer: the built program with a servers file. A
// channel the file gives the server: the model's call of its tool is put
// before the person, the server (started with its secret from a file) has
// run nothing until "allow", then runs it. A channel it does not give: the
// server never starts and the call fails, nobody asked.
func TestConsoleOperatorMCPServer(t *testing.T) {
	for _, given := range []bool{true, false} {
		t.Run(map[bool]string{true: "given", false: "not-given"}[given], func(t *testing.T) {
			api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				if trs := req.ToolResults(); len(trs) > 0 {
					return fakeanthropic.TextReply("tool said: " + trs[0].Content)
				}
				return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("mcp__ops__"+testmcp.Tool, map[string]string{"name": "viabot"})}}
			})
			env, _ := consoleEnv(t, api)
			// The program lies outside the sessions' directories and where
			// a sandbox sees it (not the host's /tmp); its marks where a
			// session may write.
			binDir, err := os.MkdirTemp("/var/tmp", "testmcp")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(binDir) })
			bin := testmcp.Build(t, binDir)
			marks := filepath.Join(envValue(env, "CLAUDEOPS_WORKDIR"), "marks")
			if err := os.Mkdir(marks, 0o755); err != nil {
				t.Fatal(err)
			}
			secret := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(secret, []byte("tok-from-file\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			channel := map[bool]string{true: "console", false: "C-elsewhere"}[given]
			servers := filepath.Join(t.TempDir(), "servers.json")
			body := `{"mcpServers": {"ops": {"command": "` + bin + `", "args": ["-marks", "` + marks + `"],
				"env": {"` + testmcp.TokenEnv + `": {"file": "` + secret + `"}}, "channels": ["` + channel + `"]}}}`
			if err := os.WriteFile(servers, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startConsole(t, append(env, "CLAUDEOPS_MCP_SERVERS_FILE="+servers), nil, nil)
			p.say(t, "touch it")
			if !given {
				p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\] — ✓`)
				p.finish(t)
				if started, _ := testmcp.Started(t, marks); started || strings.Contains(p.stdout.String(), "reply: allow") {
					t.Errorf("started %v; stdout:\n%s", started, p.stdout.String())
				}
				return
			}
			p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\]   reply: allow`)
			if started, token := testmcp.Started(t, marks); !started || token != "tok-from-file" {
				t.Errorf("started %v with %q", started, token)
			}
			if called := testmcp.Called(t, marks); len(called) != 0 {
				t.Fatalf("ran %v before the decision", called)
			}
			p.say(t, "allow")
			p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\] claude: tool said: touched viabot`)
			p.finish(t)
			if called := testmcp.Called(t, marks); !reflect.DeepEqual(called, []string{"viabot"}) {
				t.Errorf("ran %v", called)
			}
		})
	}
}

// envValue is name's value in env, the last entry winning.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
