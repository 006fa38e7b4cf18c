package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestNewRemovesTheThreadsHome: with a runner that keeps a CLI home per
// thread, two threads each resume their own conversation after a restart
// of the bot (the model is sent the earlier turn); `new` in one removes
// that thread's home, whose next message starts afresh, while the other
// thread's home stays and still resumes.
func TestNewRemovesTheThreadsHome(t *testing.T) {
	script := func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		text := "noted"
		if strings.Contains(req.LastUserText(), "which word") {
			text = "no idea"
			if strings.Contains(req.Transcript(), "pineapple") {
				text = "you said pineapple"
			}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text(text)}}
	}
	base := filepath.Join(t.TempDir(), "claude-homes")
	h := newHarness(t, script, func(c *testConfig) {
		if sb, ok := c.Runner.(claudeproc.Sandbox); ok { // CLAUDEOPS_TEST_RUNNER=sandbox
			base = sb.HomeBase
			return
		}
		c.Runner = claudeproc.Local{HomeBase: base}
	})
	home := func(thread string) string {
		return claudeproc.HomeIn(base, claudeproc.Session{Thread: "console/console/" + thread})
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	h.say("note the word pineapple")
	h.expect(`^\[main\] claude: noted$`)
	h.say("/thread t2")
	h.say("note the word pineapple")
	h.expect(`^\[t2\] claude: noted$`)
	if !exists(home("main")) || !exists(home("t2")) {
		t.Fatalf("no home per thread in %s", base)
	}

	h.restart()
	h.say("/thread main")
	h.say("which word did I say?")
	h.expect(`^\[main\] claude: you said pineapple$`)
	h.say("new")
	h.expect(`^\[main\] \* Session ended\.`)
	if exists(home("main")) {
		t.Errorf("main's home %s is still there after new", home("main"))
	}
	if !exists(home("t2")) {
		t.Errorf("t2's home went with main's")
	}
	h.say("which word did I say?")
	h.expect(`^\[main\] claude: no idea$`)
	h.say("/thread t2")
	h.say("which word did I say?")
	h.expect(`^\[t2\] claude: you said pineapple$`)
}
