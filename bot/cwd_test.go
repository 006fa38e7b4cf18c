package bot

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/store"
)

// TestCwdRefusesBotState: an admin (or someone who talked one into it)
// names a directory whose tree holds the bot's database and keys, by every
// road to it: the parent, `..` climbs, /, links to an ancestor or to the
// state itself, the state directory and a folder inside it. Each is
// refused and the channel's stored working directory (what sessions start
// in) stays unset; a sibling whose name only starts like the state
// directory's is fine, and a link is stored resolved.
func TestCwdRefusesBotState(t *testing.T) {
	state := t.TempDir() // <parent>/001: a sibling of the workdir below
	db := filepath.Join(state, "claudeops.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, script(nil), func(c *testConfig) {
		c.ProtectedPaths = []string{state, db, db + "-wal", db + "-shm"}
	})
	parent := filepath.Dir(state)
	if filepath.Dir(h.workdir) != parent {
		t.Fatalf("layout: workdir %s and state %s are not siblings", h.workdir, state)
	}
	mkdir := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, name string) string {
		t.Helper()
		p := filepath.Join(h.workdir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sub := mkdir(filepath.Join(h.workdir, "sub"))
	inside := mkdir(filepath.Join(state, "inside"))
	lookalike := mkdir(state + "2") // "/x/0012" is not inside "/x/001"
	link(parent, "up")
	link("/", "root")
	link(state, "statelink")
	link("../..", "sub/climb") // sub/climb → the parent of the workdir
	link(sub, "sublink")

	refused := []string{
		"..",
		"../..",
		"/",
		parent,
		state,
		state + "/",
		inside,
		"sub/../..",
		"./sub/../../" + filepath.Base(state),
		"up",
		"root",
		"statelink",
		"statelink/inside",
		"sub/climb",
		"up/" + filepath.Base(state) + "/..",
	}
	for _, dir := range refused {
		h.say("cwd " + dir)
		h.expect(`^\[main\] \* Refused: .*(holds|lies inside) the bot's own state|^\[main\] \* Refused: .*is the root of the file system`)
	}
	if c, ok, err := h.st.GetChannel(context.Background(), console.Platform+"/"+console.Platform); err != nil || (ok && c.Cwd != "") {
		t.Fatalf("after the refusals the channel's working directory is %q (%v)", c.Cwd, err)
	}

	for _, tc := range []struct{ arg, stored string }{
		{lookalike, lookalike},
		{"sub", sub},
		{"sublink", sub},
	} {
		h.say("cwd " + tc.arg)
		h.expect(`^\[main\] \* Working directory of this channel: ` + regexp.QuoteMeta(tc.stored) + `\.`)
		c, ok, err := h.st.GetChannel(context.Background(), console.Platform+"/"+console.Platform)
		if err != nil || !ok || c.Cwd != tc.stored {
			t.Errorf("cwd %s: stored %q (%v %v), want %s", tc.arg, c.Cwd, ok, err, tc.stored)
		}
	}
}

// TestStoredCwdCheckedAtStart: a working directory stored before `cwd`
// checked it (an older version, an edited database) that holds the bot's
// state starts no session: Claude is never asked, the thread is told.
func TestStoredCwdCheckedAtStart(t *testing.T) {
	state := t.TempDir()
	db := filepath.Join(state, "claudeops.db")
	h := newHarness(t, script(nil), func(c *testConfig) {
		c.ProtectedPaths = []string{state, db}
	})
	err := h.st.SaveChannel(context.Background(), store.Channel{Key: console.Platform + "/" + console.Platform, Cwd: filepath.Dir(state), UpdatedBy: "old"})
	if err != nil {
		t.Fatal(err)
	}
	h.say("hello")
	h.expect(`Could not start Claude Code: the working directory .* holds the bot's own state`)
	if n := len(h.api.Requests()); n != 0 {
		t.Errorf("the model was asked %d times from a directory holding the bot's state", n)
	}
}
