package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/dbdamage"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// dbEnv is a console bot's environment on the state directory state, the
// real CLI on a fake model API that remembers pineapple.
func dbEnv(t *testing.T, state string) []string {
	t.Helper()
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "recall") && strings.Contains(req.Transcript(), "pineapple") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I remember pineapple")}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted")}}
	})
	home, work := t.TempDir(), t.TempDir()
	env := testkit.CLIEnv(home, api.URL, "CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work)
	return append(env, testrunner.Env(t, home)...)
}

// withRows gives the database at db rows enough that received_messages
// spans pages (a real interior page to damage), as a bot's long life does:
// settled, so that a start leaves them alone.
func withRows(t *testing.T, db string) {
	t.Helper()
	st, err := store.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if _, err := st.RecordMessage(t.Context(), store.ReceivedMessage{Platform: "console", Key: fmt.Sprint("old-", i),
			ThreadKey: "console:old", Text: strings.Repeat("pineapple ", 20), ReceivedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := st.SettleMessage(t.Context(), "console", fmt.Sprint("old-", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDatabaseDamagedOrGoneRefusedAtStart: a bot ran and stopped; then its
// database is damaged (an interior page overwritten: SQLite's own
// quick_check says so), damaged after an unclean stop, emptied to zero
// length, or gone. The next start exits 78 saying what it found and how to
// restore, and leaves the file as it was (nothing made in its place). A
// first start on nothing works, and leaves the mark that makes the rest
// possible.
func TestDatabaseDamagedOrGoneRefusedAtStart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	env := dbEnv(t, state)
	db := filepath.Join(state, "claudeops.db")
	first := startBotProc(t, env)
	first.say("status")
	first.expect(`State: `)
	if err := first.endInput(60 * time.Second); err != nil {
		t.Fatalf("a first start on nothing: %v", err)
	}
	if _, err := os.Stat(store.MarkPath(db)); err != nil {
		t.Fatalf("the first start left no mark: %v", err)
	}
	withRows(t, db)
	tests := []struct {
		name   string
		damage func(t *testing.T, db string)
		found  []string
	}{
		{name: "an interior page damaged", damage: func(t *testing.T, db string) { dbdamage.Interior(t, db, "received_messages") },
			found: []string{"is damaged: quick_check says"}},
		{name: "damaged, after an unclean stop", damage: func(t *testing.T, db string) {
			dbdamage.Interior(t, db, "received_messages")
			if err := store.MarkOpen(db, time.Now()); err != nil { // as a bot killed with -9 leaves it
				t.Fatal(err)
			}
		}, found: []string{"is damaged: integrity_check says"}},
		{name: "zero length", damage: func(t *testing.T, db string) { os.Truncate(db, 0) },
			found: []string{"a zero-length file, where the bot had kept its database since"}},
		{name: "gone", damage: func(t *testing.T, db string) {
			for _, s := range []string{"", "-wal", "-shm"} {
				os.Remove(db + s)
			}
		}, found: []string{"no file, where the bot has kept its database since"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := filepath.Join(t.TempDir(), "state")
			if err := os.CopyFS(st, os.DirFS(state)); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(st, "claudeops.db")
			tt.damage(t, db)
			before, _ := os.ReadFile(db)
			code, _, stderr := runOnce(t, os.Args[0], append(env, "CLAUDEOPS_STATE_DIR="+st), nil, "console")
			if code != exitConfig {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitConfig, stderr)
			}
			for _, want := range append(tt.found, db, "changed nothing", "claudeops restore <backup file>") {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			after, err := os.ReadFile(db)
			if !bytes.Equal(before, after) || (before == nil) != errors.Is(err, os.ErrNotExist) {
				t.Errorf("the file changed (%d bytes → %d, %v)", len(before), len(after), err)
			}
		})
	}
}

// TestRestoreThenThreadsResume: `claudeops restore` is refused while a
// bot runs on the database (78, nothing changed) and for a damaged backup
// (2, nothing changed); with the bot stopped and its database emptied
// (the start refused: 78), it puts the checked backup in place, keeps the
// emptied file aside (renamed, not removed), and the next start resumes
// the thread with its context, as the model API sees it.
func TestRestoreThenThreadsResume(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	env := dbEnv(t, state)
	db := filepath.Join(state, "claudeops.db")
	b := startBotProc(t, env)
	b.say("note pineapple")
	b.expect(`^\[main\] claude: noted$`)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if code, out, errs := runOnce(t, os.Args[0], env, nil, "backup", backup); code != 0 {
		t.Fatalf("backup: %d %s %s", code, out, errs)
	}
	if code, _, errs := runOnce(t, os.Args[0], env, nil, "restore", backup); code != exitConfig || !strings.Contains(errs, "stop that bot first") {
		t.Errorf("restore beside a running bot: exit %d, %s", code, errs)
	}
	if err := b.endInput(60 * time.Second); err != nil {
		t.Fatalf("bot exit: %v", err)
	}
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runOnce(t, os.Args[0], env, nil, "console"); code != exitConfig || !strings.Contains(errs, "zero-length") {
		t.Fatalf("start on the emptied database: exit %d, %s", code, errs)
	}

	bad := filepath.Join(t.TempDir(), "bad.db")
	withRows(t, bad)
	dbdamage.Interior(t, bad, "received_messages")
	if code, _, errs := runOnce(t, os.Args[0], env, nil, "restore", bad); code != exitUsage || !strings.Contains(errs, "damaged") || !strings.Contains(errs, "nothing was changed") {
		t.Errorf("restore from a damaged backup: exit %d, %s", code, errs)
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
		t.Errorf("a refused restore changed the database: %v, %v", fi, err)
	}

	code, out, errs := runOnce(t, os.Args[0], env, nil, "restore", backup)
	if code != 0 || !strings.Contains(out, "restored "+db) || !strings.Contains(out, "kept aside, not removed: "+db+".before-restore-") {
		t.Fatalf("restore: exit %d\n%s\n%s", code, out, errs)
	}
	aside, _ := filepath.Glob(db + ".before-restore-*")
	if len(aside) == 0 {
		t.Fatalf("nothing kept aside; restore said:\n%s", out)
	}
	if fi, err := os.Stat(aside[0]); err != nil || fi.Size() != 0 {
		t.Errorf("the emptied file kept aside: %v, %v", fi, err)
	}
	if q := dbdamage.QuickCheck(t, db); q != "ok" {
		t.Errorf("the restored database: quick_check %s", q)
	}
	b2 := startBotProc(t, env)
	b2.say("recall")
	b2.expect(`^\[main\] claude: I remember pineapple$`)
	if err := b2.endInput(60 * time.Second); err != nil {
		t.Fatalf("restored bot exit: %v", err)
	}
}
