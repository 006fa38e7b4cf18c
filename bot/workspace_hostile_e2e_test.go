package bot

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters/console"
)

// A session's git and the bot's, end to end: the console, the real CLI,
// the fake model, real git with a bare repository on disk as the remote.

// TestWorktreeSessionGitConfigRunsNothing: the model, with a person's
// approval, sets a clean filter with git config in its worktree (git
// refuses: the clone's config is locked) and then writes it into the
// clone's config by hand: the bot's end-of-turn snapshot refuses, says
// so, records it and restores the config; diff, commit and push then run
// nothing planted, and the remote gets the session's work unfiltered.
// Checked to fail with the workspace's config check removed (the trap runs).
func TestWorktreeSessionGitConfigRunsNothing(t *testing.T) {
	h, bare, wsDir := wsHarness(t, nil)
	dir := t.TempDir()
	trap, marker := filepath.Join(dir, "evil.sh"), filepath.Join(dir, "PWNED")
	if err := os.WriteFile(trap, []byte("#!/bin/sh\necho \"HOME=$HOME $0 $*\" >> '"+marker+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.say("run git config filter.x.clean " + trap + "; echo '* filter=x' > .gitattributes; echo two >> notes.txt")
	h.say("allow " + h.expect(`\? approval (\w+): Bash`)[1])
	h.expect(`could not lock config file .*: File exists`)
	h.expect(`📝 2 files changed`)

	h.say(`run printf '[filter "x"]\n\tclean = ` + trap + `\n' >> "$(git rev-parse --git-common-dir)/config"`)
	h.say("allow " + h.expect(`\? approval (\w+): Bash`)[1])
	h.expect(`claude: tool result: `)
	h.expect(`— ✓`)
	// The turn's end snapshot refuses (or, should it come later, diff).
	h.say("diff")
	first := h.expect(`(⚠️ The bot's git refused to work in this repository|Could not make the diff): .*|📎 claudeops-thread-main-[0-9a-f]+\.diff`)[0]
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a planted filter ran:\n%s", b)
	}
	if !strings.Contains(first, "changed outside the bot (config differs from what the bot wrote; restored)") {
		t.Fatalf("the plant was not refused: %q", first)
	}
	if strings.Contains(first, "Could not make the diff") {
		h.say("diff")
	}
	h.expect(`📎 claudeops-thread-main-[0-9a-f]+\.diff`)

	th := threadRecord(t, h, "main")
	h.say("commit the session's work")
	h.expect(`\* Committed [0-9a-f]+ on`)
	h.say("push")
	h.expect(`\* Pushed ` + "`" + th.Branch + "`")

	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a planted filter ran:\n%s", b)
	}
	if got := remoteFile(t, bare, th.Branch, "notes.txt"); got != "line one\ntwo\n" {
		t.Errorf("remote notes.txt = %q", got)
	}
	if got := remoteFile(t, bare, th.Branch, ".gitattributes"); got != "* filter=x\n" {
		t.Errorf("remote .gitattributes = %q", got)
	}
	clone := cloneOf(t, wsDir, th)
	if out, err := exec.Command("git", "config", "--file", filepath.Join(clone, "config"), "--get-regexp", "^filter").CombinedOutput(); err == nil {
		t.Errorf("the clone's config still defines a filter: %s", out)
	}
	audit, err := h.st.AuditLog(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, e := range audit {
		refused = refused || (e.Action == "refused" && strings.HasPrefix(e.Target, "git ") &&
			strings.Contains(e.Detail, "changed outside the bot") && !e.Allowed)
	}
	if !refused {
		t.Errorf("no audit entry for the refusal: %+v", audit)
	}
}

// TestWorktreeAttachmentsNotCommitted: a file attached in a
// repository-bound thread stays out of commit and push; added on purpose
// (the session's git add), it is committed. Checked to fail with the
// workspace's DefaultExclude emptied (the attachment is pushed).
func TestWorktreeAttachmentsNotCommitted(t *testing.T) {
	h, bare, _ := wsHarness(t, nil)
	h.say("hello")
	h.expect(`claude: ok: `)
	var src source
	h.sendFiles(console.Thread("main"), "att-1", console.OperatorID, "keep this for later",
		src.file("brief.txt", "text/plain", 6, strings.NewReader("brief\n")))
	h.expect(`claude: ok: .*keep this for later`)
	th := threadRecord(t, h, "main")
	saved := filepath.Join(th.Worktree, attachDir, threadDirName(console.Thread("main").Key()), "brief.txt")
	if _, err := os.Stat(saved); err != nil {
		t.Fatalf("the attachment is not in the worktree: %v", err)
	}
	h.say("run echo two >> notes.txt")
	h.say("allow " + h.expect(`\? approval (\w+): Bash`)[1])
	h.expect(`📝 1 file changed, \+1 −0\n?`)
	h.say("commit")
	h.expect(`\* Committed [0-9a-f]+ on`)
	h.say("push")
	h.expect(`\* Pushed ` + "`" + th.Branch + "`")
	if got := remoteFile(t, bare, th.Branch, "notes.txt"); got != "line one\ntwo\n" {
		t.Errorf("remote notes.txt = %q", got)
	}
	if names := gitRun(t, bare, "--git-dir", bare, "ls-tree", "-r", "--name-only", "refs/heads/"+th.Branch); strings.Contains(names, attachDir) {
		t.Fatalf("the attachment was pushed:\n%s", names)
	}

	// On purpose: the session adds it.
	h.say("run git add " + attachDir)
	h.say("allow " + h.expect(`\? approval (\w+): Bash`)[1])
	h.expect(`📝 1 file changed`)
	h.say("commit the brief too")
	h.expect(`\* Committed [0-9a-f]+ on`)
	h.say("push")
	h.expect(`\* Pushed ` + "`" + th.Branch + "`")
	rel, _ := filepath.Rel(th.Worktree, saved)
	if got := remoteFile(t, bare, th.Branch, rel); got != "brief\n" {
		t.Errorf("remote %s = %q", rel, got)
	}
}

// TestWorktreeAttachmentsOnTheFirstMessage: files attached to the message
// that starts a repository-bound thread land in its worktree, not in the
// default working directory (the worktree was made after they were saved).
func TestWorktreeAttachmentsOnTheFirstMessage(t *testing.T) {
	h, _, _ := wsHarness(t, nil)
	var src source
	h.sendFiles(console.Thread("main"), "att-first", console.OperatorID, "read the brief",
		src.file("brief.txt", "text/plain", 6, strings.NewReader("brief\n")))
	h.expect(`claude: ok: .*read the brief`)
	th := threadRecord(t, h, "main")
	if th.Worktree == "" {
		t.Fatal("no worktree")
	}
	saved := filepath.Join(th.Worktree, attachDir, threadDirName(console.Thread("main").Key()), "brief.txt")
	if _, err := os.Stat(saved); err != nil {
		t.Errorf("the first message's attachment is not in the worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.workdir, attachDir)); err == nil {
		t.Errorf("it went to the default working directory")
	}
}
