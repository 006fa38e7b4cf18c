package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// monitorScript is script, plus "monitor <command>": a Monitor call.
func monitorScript(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
	text := req.LastUserText()
	if cmd, ok := strings.CutPrefix(text, "monitor "); ok && len(req.ToolResults()) == 0 {
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Monitor",
			map[string]any{"command": cmd, "description": "as asked", "timeout_ms": 30000})}}
	}
	return script(nil)(ctx, req)
}

// TestMonitorGrantIsACommandRule is finding 5 of issue 24 with the real
// CLI: "Allow for thread" on a Monitor call stored the bare tool, and
// every later Monitor command ran unasked. Now it stores a command rule,
// and another command is asked.
func TestMonitorGrantIsACommandRule(t *testing.T) {
	h := newHarness(t, monitorScript, nil)
	// The CLI runs what it reads as read-only (echo, ls) unasked; make asks.
	if err := os.WriteFile(filepath.Join(h.workdir, "Makefile"), []byte("test:\n\ttrue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.say("monitor make test")
	m := h.expect(`^\[main\] (?:\? approval (\w+): Monitor wants to run|✗ Monitor: .*(No such tool available: Monitor))`)
	if m[2] != "" {
		t.Skip("this CLI has no Monitor tool (2.1.309 has none)")
	}
	id := m[1]
	h.say("allow thread")
	h.expect(`! approval ` + id + `: Allowed by operator for this thread \(Monitor\(make test:\*\)\)$`)
	h.expect(`^\[main\] — `)
	from := h.cursor
	h.say("monitor make test -s")
	h.expect(`✓ Monitor: make test -s`)
	h.expect(`^\[main\] — `)
	h.absent(from, `\? approval`)

	h.say("monitor touch pwned")
	id = h.expect(`^\[main\] \? approval (\w+): Monitor wants to run`)[1]
	h.say("deny")
	h.expect(`! approval ` + id + `: Denied by operator$`)
	h.expect(`^\[main\] — `)
	if _, err := os.Stat(filepath.Join(h.workdir, "pwned")); !os.IsNotExist(err) {
		t.Errorf("the later Monitor command ran: %v", err)
	}
}

// TestProtectedPlaceAsksDespiteRule: an admin's Bash(cp:*) copies files,
// but not over the CLI's settings, whether named through ~ or through a
// link in the working tree (resolved by the bot): a person is asked.
func TestProtectedPlaceAsksDespiteRule(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	if err := os.WriteFile(filepath.Join(h.workdir, "a.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(h.home, ".claude")
	if err := os.MkdirAll(settings, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(settings, filepath.Join(h.workdir, "link")); err != nil {
		t.Fatal(err)
	}
	h.say("rules add allow Bash(cp:*)")
	h.expect(`\* Rule \d+: allow`)
	from := h.cursor
	h.say("run cp a.txt b.txt")
	h.expect(`✓ Bash: cp a\.txt b\.txt`)
	h.expect(`^\[main\] — ✓`)
	h.absent(from, `\? approval`)

	for _, cmd := range []string{"cp a.txt link/hooks.json", "cp a.txt ~/.claude/hooks.json", "cp a.txt $HOME/.bashrc"} {
		h.say("run " + cmd)
		id := h.expect(`^\[main\] \? approval (\w+): Bash wants to run`)[1]
		h.expect(`This names a protected place`)
		h.say("deny")
		h.expect(`! approval ` + id + `: Denied by operator$`)
		h.expect(`^\[main\] — `)
	}
	for _, p := range []string{filepath.Join(settings, "hooks.json"), filepath.Join(h.home, ".bashrc")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written: %v", p, err)
		}
	}
}
