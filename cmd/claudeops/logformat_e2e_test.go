package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// TestJSONLogs runs the console with CLAUDEOPS_LOG_FORMAT=json through two
// turns, one with an approval: every line the bot logs is one JSON object
// (parsed by encoding/json, line by line), and the lines of a turn name
// their thread and the turn's record, as the database holds it.
func TestJSONLogs(t *testing.T) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}}
		}
		if strings.HasSuffix(req.LastUserText(), "touch it") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch it.txt"})}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("noted")}}
	})
	home, work := t.TempDir(), t.TempDir()
	db := filepath.Join(t.TempDir(), "claudeops.db")
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_DB="+db, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"CLAUDEOPS_LOG_LEVEL=debug", "CLAUDEOPS_LOG_FORMAT=json",
	)
	env = append(env, testrunner.Env(t, home)...)

	b := startBotProc(t, env)
	b.say("hello")
	b.expect(`^\[main\] claude: noted$`)
	b.say("touch it")
	id := b.expect(`^\[main\] \? approval (\w+): Bash`)[1]
	b.say("allow " + id)
	b.expect(`^\[main\] claude: done$`)
	if err := b.endInput(60 * time.Second); err != nil {
		t.Fatalf("bot exit: %v", err)
	}

	type line struct {
		Time, Level, Msg string
		Thread           string `json:"thread"`
		Turn             int64  `json:"turn"`
	}
	var lines []line
	for i, raw := range b.logLines() {
		var l line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("log line %d is not JSON (%v): %q", i, err, raw)
		}
		if l.Time == "" || l.Level == "" || l.Msg == "" {
			t.Errorf("log line %d lacks time, level or msg: %q", i, raw)
		}
		lines = append(lines, l)
	}

	// The oracle: the turns the database recorded.
	sdb, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	want := map[int64]string{}
	rows, err := sdb.Query(`SELECT id, thread_key FROM turns`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			t.Fatal(err)
		}
		want[id] = key
	}
	rows.Close()
	if len(want) != 2 {
		t.Fatalf("the database holds %d turns, want 2: %v", len(want), want)
	}

	// Each recorded turn starts and ends in the log under its thread;
	// whatever the thread logs in between names the turn.
	for id, key := range want {
		started, ended := -1, -1
		for i, l := range lines {
			if l.Turn == id && l.Thread == key && l.Msg == "turn started" {
				started = i
			}
			if l.Turn == id && l.Thread == key && l.Msg == "turn ended" {
				ended = i
			}
		}
		if started < 0 || ended < started {
			t.Fatalf("turn %d of %s: no \"turn started\" … \"turn ended\" naming it; log:\n%s", id, key, strings.Join(b.logLines(), "\n"))
		}
		for _, l := range lines[started:ended] {
			if l.Thread == key && l.Turn != id {
				t.Errorf("turn %d: a line of its thread names turn %d: %+v", id, l.Turn, l)
			}
		}
	}
	for _, l := range lines {
		if l.Turn != 0 && want[l.Turn] != l.Thread {
			t.Errorf("a line names turn %d of thread %q, which the database does not hold: %+v", l.Turn, l.Thread, l)
		}
	}
}
