package bot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/testcli"
)

// TestConsoleSendFile: Claude posts a file of its working directory into
// the thread with the bot's send_file tool, through the real CLI; a path
// outside the working directory is refused and nothing is posted.
func TestConsoleSendFile(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	if err := os.WriteFile(filepath.Join(h.workdir, "report.md"), []byte("# Nightly\nall green\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("not for the thread\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(h.workdir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	from := h.cursor
	h.say("sendfile report.md the nightly report")
	h.expect(`^\[main\] 📎 report\.md \(20 bytes\)$`)
	h.expect(`^\[main\]     # Nightly$`)
	h.expect(`^\[main\]     all green$`)
	h.expect(`^\[main\] claude: tool result: .*report\.md`)
	h.expect(`^\[main\] — ✓`)
	h.absent(from, `\? approval`) // the built-in rule allows the bot's own tools

	for _, p := range []string{outside, "../" + filepath.Base(h.workdir) + "/../outside.txt", "link.txt"} {
		from = h.cursor
		h.say("sendfile " + p)
		h.expect(`^\[main\] claude: tool result: `)
		h.expect(`^\[main\] — ✓`)
		h.absent(from, `📎|not for the thread`)
	}
}

// TestConsoleSendFileSeesWhatTheSessionSees: in a real sandbox that hides
// the working directory's .env, the session cannot read it (the oracle:
// cat under bwrap) and send_file does not post it, by name or through a
// link; the report beside it is posted unasked.
func TestConsoleSendFileSeesWhatTheSessionSees(t *testing.T) {
	testcli.Bwrap(t)
	var env string
	h := newHarness(t, script(nil), func(c *testConfig) {
		env = filepath.Join(c.Workdir, ".env")
		c.Runner = claudeproc.Sandbox{HomeBase: filepath.Join(t.TempDir(), "homes"), Hide: []string{env}}
	})
	for name, body := range map[string]string{".env": "TOKEN=hidden-from-the-session\n", "report.md": "all green\n"} {
		if err := os.WriteFile(filepath.Join(h.workdir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".env", filepath.Join(h.workdir, "env-link")); err != nil {
		t.Fatal(err)
	}
	// The session's own view, from inside the sandbox (the CLI runs cat
	// unasked).
	h.say("run cat .env")
	h.expect(`^\[main\] claude: .*\.env: Permission denied`)
	h.expect(`^\[main\] — `)
	for _, p := range []string{".env", "env-link"} {
		from := h.cursor
		h.say("sendfile " + p)
		h.expect(`^\[main\] claude: tool result: .*hidden from this session`)
		h.expect(`^\[main\] — `)
		h.absent(from, `📎|hidden-from-the-session`)
	}
	from := h.cursor
	h.say("sendfile report.md")
	h.expect(`^\[main\] 📎 report\.md \(10 bytes\)$`)
	h.expect(`^\[main\] — ✓`)
	h.absent(from, `\? approval`)
}

// TestConsoleSendFileAsksWhereAPersonWould: posting a file shows it to
// the thread, so a deny rule on reading it denies posting it, and a file
// that looks like a secret is asked about (the built-in rule does not
// cover it); denied, nothing is posted.
func TestConsoleSendFileAsksWhereAPersonWould(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	for name, body := range map[string]string{".env": "TOKEN=ask-first\n", "keys/deploy.txt": "kept back\n", "report.md": "all green\n"} {
		p := filepath.Join(h.workdir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h.say("rules add deny Read(keys/**)")
	h.expect(`Rule \d+: deny Read\(keys/\*\*\)`)
	from := h.cursor
	h.say("sendfile keys/deploy.txt")
	h.expect(`was denied by the rule ` + "`deny Read\\(keys/\\*\\*\\)`")
	h.expect(`^\[main\] — `)
	h.absent(from, `📎|kept back|\? approval`)

	from = h.cursor
	h.say("sendfile .env")
	id := h.expect(`^\[main\] \? approval (\w+): mcp__claudeops__send_file`)[1]
	h.say("deny")
	h.expect(`! approval ` + id + `: Denied by operator$`)
	h.expect(`^\[main\] — `)
	h.absent(from, `📎|ask-first`)

	from = h.cursor
	h.say("sendfile report.md")
	h.expect(`^\[main\] 📎 report\.md \(10 bytes\)$`)
	h.expect(`^\[main\] — ✓`)
	h.absent(from, `\? approval`)
}
