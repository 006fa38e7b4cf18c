package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/dbdamage"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/smallfs"
	"github.com/claudeops/claudeops/internal/testkit"
)

// toldStorage is what a thread is told of a message refused because the
// storage fails.
const toldStorage = `The bot cannot record messages now: its storage is failing \(`

// countLog counts the bot's log lines holding s.
func countLog(b *botProc, s string) int {
	n := 0
	for _, l := range b.logLines() {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// countOut counts the bot's output lines holding s.
func countOut(b *botProc, s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, l := range b.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// TestDamagedUnderRunningBot: a running bot's database is damaged (an
// interior page of the messages' table overwritten in the file: SQLite's
// quick_check says so). The next message is refused: the thread is told
// plainly, the log says why once (ERROR, with SQLite's error), a second
// message adds neither; /readyz turns 503 naming the damage.
func TestDamagedUnderRunningBot(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	env := append(dbEnv(t, state), "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0")
	db := filepath.Join(state, "claudeops.db")
	withRows(t, db) // a long-lived bot's messages, in the main file
	b := startBotProc(t, env)
	o := newOpsView(t, func() string { return strings.Join(b.logLines(), "\n") })
	o.waitReady("ready", func(d readyDoc) bool { return *d.Ready })

	dbdamage.Interior(t, db, "received_messages")
	b.say("status")
	b.expect(toldStorage + `the database file is damaged`)
	b.say("status")
	b.say("/thread other")
	b.expect(`switched to thread other`)
	b.say("status")
	b.expect(toldStorage) // another thread is told too
	d := o.waitReady("the damage", func(d readyDoc) bool { return !*d.Ready })
	if r := reasons(d); !strings.Contains(r, "database damaged: ") || !strings.Contains(r, "quick_check says") {
		t.Errorf("/readyz reasons: %s", r)
	}
	b.waitLog(`level=ERROR msg="the database checked after a storage fault`)
	if n := countLog(b, `quick_check says`); n == 0 {
		t.Errorf("the check after the fault did not say what it found; log:\n%s", strings.Join(b.logLines(), "\n"))
	}
	if n := countLog(b, `level=ERROR msg="storage fails: the database file is damaged`); n != 1 {
		t.Errorf("the damage logged %d times, want once; log:\n%s", n, strings.Join(b.logLines(), "\n"))
	}
	if n := countOut(b, "[main] "); n == 0 || countOut(b, "cannot record messages now") != 2 {
		t.Errorf("told %d times in two threads, want once each", countOut(b, "cannot record messages now"))
	}
	b.endInput(60 * time.Second) //nolint:errcheck // its exit is not what is tested
}

// storageBot is a console bot whose state directory is on a small file
// system of its own, started and answering.
func storageBot(t *testing.T) (b *botProc, dir string) {
	t.Helper()
	dir = smallfs.Mount(t, 32<<20)
	state := filepath.Join(dir, "state")
	b = startBotProc(t, append(dbEnv(t, state), "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0"))
	b.say("status")
	b.expect(`State: `)
	return b, dir
}

// TestReadOnlyWhileRunning: the file system under the state directory
// turns read-only (ext4's abort, as a disk error with errors=remount-ro
// does). The next message is refused, the thread told plainly, the log
// warns once with the error, and more messages add no warning; /readyz
// is 503.
func TestReadOnlyWhileRunning(t *testing.T) {
	b, dir := storageBot(t)
	o := newOpsView(t, func() string { return strings.Join(b.logLines(), "\n") })
	smallfs.ReadOnly(t, dir)
	for range 3 {
		b.say("status")
	}
	b.expect(toldStorage)
	o.waitReady("not ready", func(d readyDoc) bool { return !*d.Ready })
	b.say("status")
	b.say("/thread other")
	b.say("status")
	b.expect(toldStorage)
	b.waitLog(`msg="the database checked after a storage fault: its pages are sound" fault="the file system is read-only"`)
	warn := `level=WARN msg="storage fails: the file system is read-only`
	if n, all := countLog(b, warn), countLog(b, "read-only file system"); n != 1 || all != 1 {
		t.Errorf("logged %d times, want once; log:\n%s", n, strings.Join(b.logLines(), "\n"))
	}
	if n := countOut(b, "cannot record messages now"); n != 2 {
		t.Errorf("told %d times in two threads, want once each", n)
	}
	if n := countOut(b, "not delivered"); n != 0 {
		t.Errorf("the console showed the error %d times beside the notice", n)
	}
	b.endInput(60 * time.Second) //nolint:errcheck // its exit is not what is tested
}

// TestDiskFullThenWorksAgain: the state directory's file system fills up;
// a message is refused, the thread told, the log warns once (no line per
// message); once space is back (the reserve the store keeps given back,
// or the operator's filler removed) the next message is taken and the
// log says storage works again, once, with how long it was out; /readyz
// is ready.
func TestDiskFullThenWorksAgain(t *testing.T) {
	b, dir := storageBot(t)
	o := newOpsView(t, func() string { return strings.Join(b.logLines(), "\n") })
	filler := smallfs.Fill(t, dir, 0)
	// A write that fits in blocks the database's files already have
	// still succeeds: messages until one needs a new block.
	testkit.WaitForf(t, 30*time.Second, func() bool {
		b.say("status")
		return countOut(b, "cannot record messages now") > 0
	}, func() string {
		return "no message was refused on the full disk; log:\n" + strings.Join(b.logLines(), "\n")
	})
	b.expect(toldStorage + `the disk is full`)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForf(t, 30*time.Second, func() bool {
		b.say("status")
		return countLog(b, `msg="storage works again" was="the disk is full" out=`) == 1
	}, func() string { return "storage never worked again; log:\n" + strings.Join(b.logLines(), "\n") })
	b.expect(`State: `)
	if n, each := countLog(b, `level=WARN msg="storage fails: the disk is full`), countLog(b, `msg="settle message"`); n != 1 || each != 0 {
		t.Errorf("logged %d times and %d per message, want once and none; log:\n%s", n, each, strings.Join(b.logLines(), "\n"))
	}
	o.waitReady("ready again", func(d readyDoc) bool { return *d.Ready })
	if code, _ := o.ready(); code != http.StatusOK {
		t.Errorf("/readyz %d", code)
	}
	if err := b.endInput(60 * time.Second); err != nil {
		t.Errorf("bot exit after storage came back: %v", err)
	}
}

// TestReadOnlyWhileRunningSlack: on a fake Slack, the state directory's
// file system turns read-only; mentions in two threads (Slack delivering
// each again while it is not acked) are refused: each thread is told
// plainly once, the log warns once with the error and has no warning per
// event (before: a WARN "event not recorded" for every delivery).
func TestReadOnlyWhileRunningSlack(t *testing.T) {
	dir := smallfs.Mount(t, 32<<20)
	fs := fakeslack.Start(t, fakeslack.Options{Strict: true})
	env := append(dbEnv(t, filepath.Join(dir, "state")),
		"SLACK_API_URL="+fs.URL+"/api/", "SLACK_BOT_TOKEN="+fs.Opts.BotToken, "SLACK_APP_TOKEN="+fs.Opts.AppToken,
		"CLAUDEOPS_ALLOWED_USERS=U0ALICE001")
	const general, alice, mention = "C0GENERAL1", "U0ALICE001", "<@U0FAKEBOT1> "
	b := startSlackBot(t, env)
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect; its log:\n%s", b.stderr.String())
	}
	told := func(thread, what string) int {
		n := 0
		for _, m := range fs.Thread(general, thread) {
			if m.BotID != "" && strings.Contains(m.VisibleText(), what) {
				n++
			}
		}
		return n
	}
	root := fs.Post(alice, general, mention+"status")
	if !fs.WaitFor(90*time.Second, func() bool { return told(root, "State: ") > 0 }) {
		t.Fatalf("no status; log:\n%s", b.stderr.String())
	}
	smallfs.ReadOnly(t, dir)
	fs.Reply(alice, general, root, mention+"status")
	other := fs.Post(alice, general, mention+"status")
	for _, th := range []string{root, other} {
		if !fs.WaitFor(90*time.Second, func() bool { return told(th, "cannot record messages now") > 0 }) {
			t.Fatalf("thread %s not told; log:\n%s", th, b.stderr.String())
		}
	}
	time.Sleep(3 * time.Second) // redeliveries, if Slack makes them
	log := b.stderr.String()
	if n := strings.Count(log, `level=WARN msg="storage fails: the file system is read-only`); n != 1 {
		t.Errorf("the cause logged %d times, want once; log:\n%s", n, log)
	}
	if n := strings.Count(log, `level=WARN msg="slack: event not recorded`); n != 0 {
		t.Errorf("a warning per event (%d); log:\n%s", n, log)
	}
	for _, th := range []string{root, other} {
		if n := told(th, "cannot record messages now"); n != 1 {
			t.Errorf("thread %s told %d times, want once", th, n)
		}
	}
}
