package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/store"
)

// TestKill9MidScheduledRunThenRestart: the bot is killed with SIGKILL
// while a scheduled run waits for the model, a minute into a 30-minute
// timeout. The next start settles the run at once: `schedule runs` shows
// it interrupted, cost unknown (the CLI reported no result), and so does
// the SQLite file, read after the bot has gone.
func TestKill9MidScheduledRunThenRestart(t *testing.T) {
	held := make(chan struct{})
	var once sync.Once
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "scheduled hold") {
			once.Do(func() { close(held) })
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("working on it " + strings.Repeat("more ", 20))}, Hold: hold, ChunkSize: 10}
		}
		return fakeanthropic.TextReply("ok")
	})
	env, state := consoleEnv(t, api)
	home := ""
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	t.Cleanup(func() { // whatever a failure left
		for _, pid := range processesWithEnv("HOME=" + home) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	b := startBotProc(t, env)
	b.say(`schedule add "0 3 * * *" scheduled hold`)
	id := b.expect(`\* Schedule (\d+): `)[1]
	b.say("schedule run " + id)
	select {
	case <-held:
	case <-time.After(90 * time.Second):
		t.Fatal("the scheduled run never asked the model")
	}
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-b.done
	_ = b.cmd.Wait()

	b2 := startBotProc(t, env)
	b2.say("schedule runs " + id)
	b2.expect(`^\[main\] \* .* · interrupted · .*· thread console/console/\S+ · ` + store.RunStoppedBeforeResult + `$`)
	if err := b2.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}

	st, err := store.Open(context.Background(), filepath.Join(state, "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sid, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(context.Background(), sid, 0)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v; want one", runs, err)
	}
	if r := runs[0]; r.Status != store.RunInterrupted || r.EndedAt.IsZero() || r.ThreadKey == "" || r.CostUSD != 0 {
		t.Errorf("in the database: %+v; want interrupted, ended, in its thread, no cost", r)
	}
}
