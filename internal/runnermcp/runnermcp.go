// Package runnermcp is for tests: the operator's MCP servers in a session
// of a runner. The real CLI, driven by the fake model API
// (internal/fakeanthropic), is given a stdio server (internal/testmcp,
// built into the session's working directory so that the runner shows it)
// and an http one (on the test's loopback: the runner must share the
// host's network), each with a secret, as the bot gives a session the
// operator's servers (claudeproc.Options.MCPServers). Run checks, with
// oracles outside our code (the server's marks, the fake API's log, the
// kernel's view from inside the session, the engine's record):
//
//   - each server's tool is listed to the model, its call asked about
//     (can_use_tool) before it runs, and run once allowed;
//   - a value full of shell text reaches the stdio server byte for byte
//     and runs nothing (no mark of it);
//   - neither secret is in the engine's record of the session (Bed.Record:
//     `docker inspect`, the Pod object), in a file below /tmp, the working
//     directory or $HOME inside the session, or on a process's command
//     line there.
//
// Each runner's tests call Run (claudeproc/docker's engine tests,
// claudeproc/kubernetes' cluster tests).
package runnermcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testmcp"
)

// Bed is where Run works.
type Bed struct {
	Runner claudeproc.Runner
	// Bin is the CLI as the runner resolves it.
	Bin string
	// Env is the CLI's whole environment for the fake model API at url.
	Env func(url string) []string
	// Dir is an empty working directory the runner shows the session.
	Dir string
	// Own, when set, gives the session's user what the test made in Dir.
	Own func(t *testing.T, paths ...string)
	// Record is the engine's record of the session's running container
	// or Pod, as whoever may read it sees it (JSON).
	Record  func(t *testing.T) string
	Session claudeproc.Session
}

// The secrets (lower case), and the probe's spelling of them (upper case,
// turned at run time: the probe's own command line and the transcript
// that keeps it never hold them).
const (
	envSecret    = "opsenv-s3cret-4a7f"
	headerSecret = "webheader-s3cret-9c1e"
)

// Hostile is the stdio server's other value: shell text that would leave
// a mark in dir if anything ran it. (Not "${NAME}": the CLI itself
// expands that in a server's configuration, from its own environment.)
func Hostile(dir string) string {
	m := func(n string) string { return filepath.Join(dir, "ran-"+n) }
	return "$(touch " + m("subst") + ") `touch " + m("backtick") + "` \\$(touch " + m("escaped") + ") " +
		"back\\slash \\\\ \\n $HOME $0 $((6*7)) 'q' \"dq\" \nEOF\ntouch " + m("eof") + "\nEOF\n ünï"
}

const (
	opsTool = "mcp__ops__" + testmcp.Tool
	webTool = "mcp__web__" + testmcp.Tool
	// turnTimeout bounds the turn: a Pod's CLI on a loaded machine is slow.
	turnTimeout = 4 * time.Minute
)

// probe lists what, inside the session, holds a secret: files, then
// command lines.
const probe = `for s in OPSENV-S3CRET-4A7F WEBHEADER-S3CRET-9C1E; do
p=$(echo "$s" | tr A-Z a-z)
grep -rlF -- "$p" /tmp "$PWD" "$HOME" 2>/dev/null | sed 's/^/file: /'
for f in /proc/[0-9]*/cmdline; do
case "$(tr '\0' ' ' < "$f" 2>/dev/null)" in *"$p"*) echo "cmdline: $f";; esac
done
done
echo probed`

// Run gives the session both servers, has the model call each tool and
// then the probe, allows each, and checks what the package's doc says.
func Run(t *testing.T, b Bed) {
	t.Helper()
	marks, webMarks := filepath.Join(b.Dir, ".ops", "marks"), t.TempDir()
	if err := os.MkdirAll(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := testmcp.Build(t, filepath.Join(b.Dir, ".ops"))
	if b.Own != nil {
		b.Own(t, filepath.Join(b.Dir, ".ops"))
	}
	web := testmcp.HTTP(t, webMarks)
	hostile := Hostile(b.Dir)
	ops, _ := json.Marshal(map[string]any{"command": bin, "args": []string{"-marks", marks},
		"env": map[string]string{testmcp.TokenEnv: hostile, "OPS_SECRET": envSecret}})
	webCfg, _ := json.Marshal(map[string]any{"type": "http", "url": web.URL,
		"headers": map[string]string{"Authorization": "Bearer " + headerSecret}})
	api := fakeanthropic.Start(t, script())
	p, err := claudeproc.Start(context.Background(), claudeproc.Options{
		Bin: b.Bin, Dir: b.Dir, Env: b.Env(api.URL), Runner: b.Runner, Session: b.Session,
		StopGrace: 10 * time.Second, RequestTimeout: time.Minute, Guard: &claudeproc.Guard{},
		MCPServers: map[string]json.RawMessage{"ops": ops, "web": webCfg},
	})
	if err != nil {
		t.Fatalf("start the session: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p.Close(ctx)
	})
	if err := p.SendText("use the operator's tools"); err != nil {
		t.Fatal(err)
	}
	first := true
	asked, res := allowAll(t, p, func(tool string) {
		if !first {
			return
		}
		first = false
		// At the first ask: nothing has run yet, the session is live.
		if tool != opsTool {
			t.Errorf("first asked about %s, want %s", tool, opsTool)
		}
		if started, got := testmcp.Started(t, marks); !started || got != hostile {
			t.Errorf("the stdio server started %v with %q,\nwant %q", started, got, hostile)
		}
		if called := testmcp.Called(t, marks); len(called) != 0 {
			t.Errorf("the server ran %v before the decision", called)
		}
		record := b.Record(t)
		for _, s := range []string{envSecret, headerSecret, "touch " + filepath.Join(b.Dir, "ran-subst")} {
			if strings.Contains(record, s) {
				t.Errorf("the engine's record of the session holds %q:\n%s", s, record)
			}
		}
	})
	if want := []string{opsTool, webTool, "Bash"}; !slices.Equal(asked, want) {
		t.Errorf("asked about %v, want %v", asked, want)
	}
	if res == nil || res.IsError || res.Result != "done" {
		t.Fatalf("the turn ended %+v", res)
	}
	check(t, b, api, marks, webMarks, web)
}

// check reads the oracles once the turn is over.
func check(t *testing.T, b Bed, api *fakeanthropic.Server, marks, webMarks string, web *testmcp.HTTPServer) {
	t.Helper()
	if called := testmcp.Called(t, marks); !slices.Equal(called, []string{"approved"}) {
		t.Errorf("the stdio server ran %v, want [approved]", called)
	}
	if called := testmcp.Called(t, webMarks); !slices.Equal(called, []string{"viahttp"}) {
		t.Errorf("the http server ran %v, want [viahttp]", called)
	}
	if !slices.Contains(web.Auths(), "Bearer "+headerSecret) {
		t.Errorf("the http server was sent Authorization %q", web.Auths())
	}
	ents, _ := filepath.Glob(filepath.Join(b.Dir, "ran-*"))
	if len(ents) > 0 {
		t.Errorf("the hostile value ran: %v", ents)
	}
	var probed string
	named := false
	for _, r := range api.Requests() {
		// The CLI names MCP tools to the model (deferred: ToolSearch
		// loads their schemas) from its first request on.
		if !r.IsProbe() && !named {
			named = true
			if tr := r.Transcript(); !strings.Contains(tr, opsTool) || !strings.Contains(tr, webTool) {
				t.Errorf("the model's first request does not name %s and %s", opsTool, webTool)
			}
		}
		for _, tr := range r.ToolResults() {
			if strings.Contains(tr.Content, "probed") {
				probed = tr.Content
			}
		}
	}
	if strings.TrimSpace(probed) != "probed" {
		t.Errorf("inside the session, the probe found a secret (or did not run):\n%s", probed)
	}
}

// script is the model: the stdio server's tool, the http one's, the probe,
// then "done".
func script() fakeanthropic.Script {
	return func(_ context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		var use fakeanthropic.Block
		switch n := len(allResults(req)); n {
		case 0:
			use = fakeanthropic.ToolUse(opsTool, map[string]any{"name": "approved"})
		case 1:
			use = fakeanthropic.ToolUse(webTool, map[string]any{"name": "viahttp"})
		case 2:
			use = fakeanthropic.ToolUse("Bash", map[string]string{"command": probe, "description": "look for the secrets"})
		default:
			use = fakeanthropic.Text("done")
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{use}}
	}
}

// allResults are the tool results of the whole conversation so far.
func allResults(req *fakeanthropic.Request) []string {
	var out []string
	for _, m := range req.Messages {
		for _, c := range m.Content {
			if c.Type == "tool_result" {
				out = append(out, c.ToolUseID)
			}
		}
	}
	return out
}

// allowAll allows every can_use_tool until the turn's result, calling
// before with each tool's name first; it returns the names asked about.
func allowAll(t *testing.T, p *claudeproc.Process, before func(tool string)) ([]string, *claudeproc.Result) {
	t.Helper()
	var asked []string
	deadline := time.After(turnTimeout)
	for {
		select {
		case ev, ok := <-p.Events():
			if !ok {
				return asked, nil
			}
			switch ev := ev.(type) {
			case *claudeproc.ControlRequest:
				if ev.CanUseTool == nil {
					continue
				}
				asked = append(asked, ev.CanUseTool.ToolName)
				before(ev.CanUseTool.ToolName)
				if err := p.Allow(ev.RequestID, nil, nil); err != nil {
					t.Fatal(err)
				}
			case *claudeproc.Result:
				return asked, ev
			}
		case <-deadline:
			t.Fatalf("no result within %s; asked about %v", turnTimeout, asked)
		}
	}
}
