package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// flockHolders are the pids /proc/locks shows holding a FLOCK on file: the
// kernel's own account, outside the bot.
func flockHolders(t *testing.T, file string) []int {
	t.Helper()
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	ino := st.Sys().(*syscall.Stat_t).Ino
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	// "1: FLOCK  ADVISORY  WRITE 12665 fe:00:9994836 0 EOF"
	re := regexp.MustCompile(`^\d+: FLOCK\s+\S+\s+WRITE\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s`)
	var pids []int
	for l := range strings.SplitSeq(string(b), "\n") {
		if m := re.FindStringSubmatch(l); m != nil && m[2] == strconv.FormatUint(ino, 10) {
			pid, _ := strconv.Atoi(m[1])
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestOneBotPerDatabase: with a bot running on a database (the kernel
// shows its pid holding the lock beside it, and a claude session live), a
// second start on the same database exits 78 naming the first's pid, host
// and start time, and changes nothing. After kill -9 of the first, its
// lock file stays behind but does not block: a new start succeeds and
// resumes the first's conversation (a correct configuration starts, the
// console with no credentials, the real CLI on a fake model API).
func TestOneBotPerDatabase(t *testing.T) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "recall") && strings.Contains(req.Transcript(), "pineapple") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I remember pineapple")}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted")}}
	})
	home, work, state := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "state")
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
	)
	env = append(env, testrunner.Env(t, home)...)
	db := filepath.Join(state, "claudeops.db")
	lockFile := db + ".lock"

	started := time.Now().Add(-time.Second).Truncate(time.Second)
	first := startBotProc(t, env)
	first.expect(`^claudeops console: `)
	first.say("note pineapple")
	first.expect(`^\[main\] claude: noted$`)
	pid := first.cmd.Process.Pid
	if got := flockHolders(t, lockFile); len(got) != 1 || got[0] != pid {
		t.Fatalf("/proc/locks: the lock file is held by %v; want the first bot, pid %d", got, pid)
	}

	checkSecondStartRefused(t, env, state, db, pid, started)
	checkKill9LeavesNoLock(t, first, lockFile, home, pid)

	third := startBotProc(t, env)
	third.expect(`^claudeops console: `)
	if got := flockHolders(t, lockFile); len(got) != 1 || got[0] != third.cmd.Process.Pid {
		t.Errorf("/proc/locks: the lock is held by %v; want the new bot, pid %d", got, third.cmd.Process.Pid)
	}
	third.say("recall")
	third.expect(`^\[main\] claude: I remember pineapple$`)
	if err := third.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	if got := flockHolders(t, lockFile); len(got) != 0 {
		t.Errorf("after a clean exit the lock is held by %v", got)
	}
}

// checkSecondStartRefused: a second start on the first bot's database (as
// configured, and through a link with no state directory) exits 78 naming
// the holder, and changes nothing.
func checkSecondStartRefused(t *testing.T, env []string, state, db string, pid int, started time.Time) {
	t.Helper()
	lockFile := db + ".lock"
	// What the refused start could change: the lock file (the database
	// itself is the first bot's to write meanwhile), and what is there.
	lockedState := func() string {
		b, _ := os.ReadFile(lockFile)
		ents, _ := os.ReadDir(state)
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		return fmt.Sprintf("%s\n%s\n%s", b, strings.Join(names, " "), snapshot(t, lockFile))
	}
	before := lockedState()
	// The same configuration; and the same file reached through a link,
	// with no state directory.
	link := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	viaLink := append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "CLAUDEOPS_STATE_DIR=") }),
		"CLAUDEOPS_DB="+link)
	host, _ := os.Hostname()
	want := fmt.Sprintf("database %s is in use by pid %d on host %s since ", db, pid, host)
	for _, env := range [][]string{env, viaLink} {
		code, stdout, stderr := runOnce(t, os.Args[0], env, nil)
		lines, n := reportedProblems(stderr)
		if code != 78 || n != 1 || len(lines) != 1 || !strings.Contains(lines[0], want) {
			t.Fatalf("second start: exit %d, problems %q (summary %d); want 78 and one line with %q\nstdout: %s\nstderr:\n%s", code, lines, n, want, stdout, stderr)
		}
		since, err := time.Parse(time.RFC3339, strings.TrimSuffix(strings.Fields(lines[0][strings.Index(lines[0], want)+len(want):])[0], ":"))
		if err != nil || since.Before(started) || since.After(time.Now()) {
			t.Errorf("since %v (%v); want the first bot's start, between %s and now", since, err, started)
		}
		if stdout != "" {
			t.Errorf("the second bot's console started: %q", stdout)
		}
		if after := lockedState(); after != before {
			t.Errorf("the refused start changed the state:\n%s\nthen\n%s", before, after)
		}
		if got := flockHolders(t, lockFile); len(got) != 1 || got[0] != pid {
			t.Errorf("after the refused start the lock is held by %v; want pid %d", got, pid)
		}
	}
}

// checkKill9LeavesNoLock: kill -9 of the first bot leaves its lock file
// but not its lock, and its claude goes.
func checkKill9LeavesNoLock(t *testing.T, first *botProc, lockFile, home string, pid int) {
	t.Helper()
	// kill -9: no shutdown, the lock file stays, naming the dead bot.
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	_ = first.cmd.Wait()
	if b, err := os.ReadFile(lockFile); err != nil || !strings.Contains(string(b), `"pid":`+strconv.Itoa(pid)) {
		t.Errorf("the lock file after kill -9: %q, %v; want it left naming pid %d", b, err, pid)
	}
	// Released with the bot, even while its claude (idle, kept between
	// turns) may still live: the lock's descriptor is not inherited.
	if got := flockHolders(t, lockFile); len(got) != 0 {
		t.Errorf("after kill -9 the lock is held by %v (claude processes: %v)", got, processesWithEnv("HOME="+home))
	}
	// That claude is ended by its keeper; wait, so that the next bot does
	// not meet it on the session.
	testkit.Until(testkit.Long, func() bool { return len(processesWithEnv("HOME="+home)) == 0 })
}
