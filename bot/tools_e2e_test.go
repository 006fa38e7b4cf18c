package bot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConsoleSendFile: Claude posts a file of its working directory into
// the thread with the bot's send_file tool, through the real CLI; a path
// outside the working directory is refused and nothing is posted.
func TestConsoleSendFile(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	if err := os.WriteFile(filepath.Join(h.workdir, "report.md"), []byte("# Nightly\nall green\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
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

	for _, p := range []string{outside, "../" + filepath.Base(h.workdir) + "/../secret.txt", "link.txt"} {
		from = h.cursor
		h.say("sendfile " + p)
		h.expect(`^\[main\] claude: tool result: `)
		h.expect(`^\[main\] — ✓`)
		h.absent(from, `📎|not for the thread`)
	}
}
