package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// TestBackupWhileRunningThenRestore: `claudeops backup` copies the
// database of a running bot; a bot started on the copy (the restore), with
// the threads' CLI homes copied beside it, resumes the thread with its
// context, as the model API sees it.
func TestBackupWhileRunningThenRestore(t *testing.T) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "recall") && strings.Contains(req.Transcript(), "pineapple") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I remember pineapple")}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted")}}
	})
	home, work, state := t.TempDir(), t.TempDir(), t.TempDir()
	db := filepath.Join(state, "claudeops.db")
	base := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
	)
	base = append(base, testrunner.Env(t, home)...)
	env := append(base, "CLAUDEOPS_DB="+db)

	b := startBotProc(t, env)
	b.say("note pineapple")
	b.expect(`^\[main\] claude: noted$`)

	// While that bot runs (and holds the database's lock).
	copyDB := filepath.Join(t.TempDir(), "backup.db")
	backup := func(dest string) (string, error) {
		cmd := exec.Command(os.Args[0], "backup", dest)
		cmd.Env = append(env, "CLAUDEOPS_TEST_RUN_MAIN=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := backup(copyDB); err != nil {
		t.Fatalf("backup while the bot runs: %v\n%s", err, out)
	}
	if out, err := backup(copyDB); err == nil {
		t.Errorf("a second backup over the first succeeded:\n%s", out)
	}
	// Never where a session could read it unasked (issue 24): the working
	// directory, below it, through a link to it, a channel's stored one.
	chanDir := t.TempDir()
	b.say("cwd " + chanDir)
	b.expect(`Working directory`)
	link := filepath.Join(t.TempDir(), "to-work")
	if err := os.Symlink(work, link); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{filepath.Join(work, "b.db"), filepath.Join(work, "sub", "b.db"), filepath.Join(link, "b.db"), filepath.Join(chanDir, "b.db")} {
		out, err := backup(dest)
		if err == nil || !strings.Contains(out, "where sessions work") {
			t.Errorf("backup to %s: %v\n%s, want refused", dest, err, out)
		}
		if _, err := os.Lstat(dest); err == nil {
			t.Errorf("%s was written", dest)
		}
	}
	if err := b.endInput(60 * time.Second); err != nil {
		t.Fatalf("bot exit: %v", err)
	}

	// The restore: a bot on the copy (the original moved away).
	if err := os.Rename(state, state+".old"); err != nil {
		t.Fatal(err)
	}
	if testcli.Runner(t) != "sandbox" {
		// The threads' CLI homes (their transcripts) are backed up with
		// the database (docs/OPERATIONS.md, "Backups") and restored where
		// the copy's bot keeps them, beside it; without them the thread
		// would start afresh, saying so.
		homes := os.DirFS(filepath.Join(state+".old", "claudeops.claude-homes"))
		if err := os.CopyFS(strings.TrimSuffix(copyDB, ".db")+".claude-homes", homes); err != nil {
			t.Fatal(err)
		}
	}
	b2 := startBotProc(t, append(base, "CLAUDEOPS_DB="+copyDB))
	b2.say("recall")
	b2.expect(`^\[main\] claude: I remember pineapple$`)
	if err := b2.endInput(60 * time.Second); err != nil {
		t.Fatalf("restored bot exit: %v", err)
	}
}
