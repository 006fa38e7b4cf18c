package main

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/smallfs"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// TestTurnShownOnAFullDiskBinary: the real binary keeps its reserve
// beside the database from the start; the state's file system fills up
// while Claude writes an answer; the answer and its footer are shown and
// the SQLite file (read once the bot has exited) holds the turn's end and
// cost, written in the reserve's space. Once space is freed, the next
// start makes the reserve again and tells the thread nothing.
func TestTurnShownOnAFullDiskBinary(t *testing.T) {
	dir := smallfs.Mount(t, 32<<20)
	state := filepath.Join(dir, "state")
	db := filepath.Join(state, "claudeops.db")
	held, hold := make(chan struct{}), make(chan struct{})
	var once sync.Once
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "write the report") {
			once.Do(func() { close(held) })
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("the report: all green")}, Hold: hold, ChunkSize: 4}
		}
		return fakeanthropic.TextReply("ok")
	})
	home, work := t.TempDir(), t.TempDir()
	env := append(testkit.CLIEnv(home, api.URL, "CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+testcli.Bin(t), "CLAUDEOPS_WORKDIR="+work),
		testrunner.Env(t, home)...)

	b := startBotProc(t, env)
	b.say("write the report")
	<-held
	if fi, err := os.Stat(store.ReservePath(db)); err != nil || fi.Size() != store.ReserveSize {
		t.Fatalf("the reserve at start: %v, %v", fi, err)
	}
	filler := smallfs.Fill(t, dir, 0)
	close(hold)
	b.expect(`^\[main\] claude: the report: all green$`)
	b.expect(`^\[main\] — ✓ .*\$0\.\d+`)
	if err := b.endInput(60 * time.Second); err != nil {
		t.Errorf("bot exit on the full disk: %v", err)
	}
	if _, err := os.Stat(store.ReservePath(db)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the reserve after the turn on the full disk: %v; want it given back", err)
	}
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var subtype string
	var cost float64
	err = conn.QueryRow(`SELECT result_subtype, cost_usd FROM turns WHERE ended_at IS NOT NULL AND prompt = 'write the report'`).Scan(&subtype, &cost)
	conn.Close()
	if err != nil || subtype != "success" || cost <= 0 {
		t.Fatalf("the turn in the file: %q $%v, %v; want its success and cost", subtype, cost, err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	b2 := startBotProc(t, env)
	b2.say("status")
	b2.expect(`^\[main\] \* Cost so far: \$0\.\d*[1-9]\d* over 1 turn$`)
	if err := b2.endInput(60 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	if fi, err := os.Stat(store.ReservePath(db)); err != nil || fi.Size() != store.ReserveSize {
		t.Errorf("the reserve after a start with room: %v, %v", fi, err)
	}
	b2.mu.Lock()
	defer b2.mu.Unlock()
	for _, l := range b2.lines {
		if strings.Contains(l, "restarted") || strings.Contains(l, "cut off") {
			t.Errorf("the restart told the thread: %q", l)
		}
	}
}
