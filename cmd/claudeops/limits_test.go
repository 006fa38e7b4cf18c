package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/bot/limits"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// TestLimitSettings: the turn timeout is a wait (above 0), a budget 0 (no
// budget) or an amount above it; every problem is listed; what passes
// reaches the bot as set.
func TestLimitSettings(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want []string      // one substring per problem line, in order
		got  limits.Config // with no problem: what the bot is given
	}{
		{"defaults", nil, nil, limits.Config{TurnTimeout: time.Hour}},
		{"set", []string{"CLAUDEOPS_TURN_TIMEOUT=90s", "CLAUDEOPS_BUDGET_THREAD_USD=5", "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD=20.5", "CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD=0.25"}, nil,
			limits.Config{TurnTimeout: 90 * time.Second, ThreadUSD: 5, ChannelDayUSD: 20.5, ScheduleRunUSD: 0.25}},
		{"0 is no budget", []string{"CLAUDEOPS_BUDGET_THREAD_USD=0", "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD=0.0"}, nil, limits.Config{TurnTimeout: time.Hour}},
		{"a turn timeout of 0 or less", []string{"CLAUDEOPS_TURN_TIMEOUT=0"}, []string{"CLAUDEOPS_TURN_TIMEOUT=0: want a duration above 0"}, limits.Config{}},
		{"negative budgets", []string{"CLAUDEOPS_TURN_TIMEOUT=-1s", "CLAUDEOPS_BUDGET_THREAD_USD=-1", "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD=-0.01", "CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD=-5"}, []string{
			"CLAUDEOPS_TURN_TIMEOUT=-1s: want a duration above 0",
			"CLAUDEOPS_BUDGET_THREAD_USD=-1: want 0 (no budget) or an amount in US dollars above 0",
			"CLAUDEOPS_BUDGET_CHANNEL_DAY_USD=-0.01: want 0 (no budget) or an amount",
			"CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD=-5: want 0 (no budget) or an amount",
		}, limits.Config{}},
		{"amounts that are no amounts", []string{"CLAUDEOPS_BUDGET_THREAD_USD=NaN", "CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD=Inf"}, []string{
			"CLAUDEOPS_BUDGET_THREAD_USD=NaN: want 0 (no budget) or an amount",
			"CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD=Inf: want 0 (no budget) or an amount",
		}, limits.Config{}},
		{"values that do not parse, once each", []string{"CLAUDEOPS_BUDGET_THREAD_USD=$5", "CLAUDEOPS_TURN_TIMEOUT=an hour"}, []string{
			"CLAUDEOPS_TURN_TIMEOUT",
			"CLAUDEOPS_BUDGET_THREAD_USD",
		}, limits.Config{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"HOME=" + t.TempDir(), "CLAUDEOPS_WORKDIR=" + t.TempDir()}, tt.env...)
			c, err := loadConfig(env)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected problems:\n%v", err)
				}
				if got := c.Extensions.Limits; got != tt.got {
					t.Errorf("the bot's limits %+v, want %+v", got, tt.got)
				}
				return
			}
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v; want a *configError", err)
			}
			lines := ce.lines()
			if len(lines) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, w) }) {
					t.Errorf("no problem line with %q in:\n%s", w, strings.Join(lines, "\n"))
				}
			}
		})
	}
}

// TestLimitsMisconfiguredExit78: the binary refuses wrong limits before
// anything starts, all of them at once, exit code 78.
func TestLimitsMisconfiguredExit78(t *testing.T) {
	dir := t.TempDir()
	cli := versionOnlyCLI(t, dir, "2.1.330")
	state := filepath.Join(dir, "state")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8",
		"CLAUDEOPS_WORKDIR=" + t.TempDir(), "CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_CLAUDE_BIN=" + cli,
		"CLAUDEOPS_TURN_TIMEOUT=0", "CLAUDEOPS_BUDGET_THREAD_USD=-2", "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD=-1"}
	code, stdout, stderr := runOnce(t, os.Args[0], env, nil)
	if code != 78 {
		t.Errorf("exit code %d, want 78", code)
	}
	lines, n := reportedProblems(stderr)
	want := []string{"CLAUDEOPS_TURN_TIMEOUT=0: want a duration above 0", "CLAUDEOPS_BUDGET_THREAD_USD=-2: want 0 (no budget)", "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD=-1: want 0 (no budget)"}
	if n != len(want) || len(lines) != len(want) {
		t.Errorf("%d problem lines (summary %d), want %d:\n%s", len(lines), n, len(want), stderr)
	}
	for _, w := range want {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, w) }) {
			t.Errorf("no problem line with %q:\n%s", w, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("the console started: %q", stdout)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused start created the state directory (%v)", err)
	}
}

// TestLimitsBinary: `claudeops console` with the limits set in its
// environment, the real CLI and the fake model API. A hung turn is stopped
// at CLAUDEOPS_TURN_TIMEOUT; the CLI runs with --max-budget-usd (its
// command line, read from /proc); the turn that crosses
// CLAUDEOPS_BUDGET_THREAD_USD is the last one the model sees. The budget's
// turns run in a second start of the bot without the turn timeout: the
// program takes no clock from the test, and 4 s of the wall clock is less
// than a loaded machine may take to start claude again and answer.
func TestLimitsBinary(t *testing.T) {
	bin := testcli.Bin(t)
	hold := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(hold) }) })
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "hang") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("hanging on")}, Hold: hold}
		}
		return fakeanthropic.TextReply("noted " + strings.Repeat("and noted ", 20))
	})
	home, work := t.TempDir(), t.TempDir()
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_DB="+filepath.Join(t.TempDir(), "claudeops.db"), "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"CLAUDEOPS_BUDGET_THREAD_USD=0.005",
	)
	env = append(env, testrunner.Env(t, home)...)
	b := startBotProc(t, append(slices.Clip(env), "CLAUDEOPS_TURN_TIMEOUT=4s"))

	// The turn hangs, on the model or before: the turn clock counts from
	// the message handed to claude, so on a loaded machine a CLI still
	// starting after 4s is stopped before it asks the model. Waiting for
	// the model's request here would then wait for one that never comes.
	// (In a thread of its own: the budget's thread starts with all of it.)
	b.say("/thread hung")
	b.say("hang")
	args := claudeArgs(t, home)
	if i := slices.Index(args, "--max-budget-usd"); i < 0 || i+1 >= len(args) || args[i+1] != "0.005" {
		t.Errorf("claude runs with %q; want --max-budget-usd 0.005", args)
	}
	b.expect(`^\[hung\] \* Stopped: the turn ran longer than 4s \(CLAUDEOPS_TURN_TIMEOUT\)\.$`)
	// A CLI that was still starting does not end the turn when
	// interrupted: it is closed after the stop grace, and the turn ends so.
	b.expect(`^\[hung\] — (■ Stopped|✗ Turn ended: the turn ran longer than 4s \(CLAUDEOPS_TURN_TIMEOUT\)$)`)
	if err := b.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}

	b = startBotProc(t, env) // in thread main
	// Each answer costs some $0.001: the fifth or so crosses $0.005.
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("twenty turns and the budget never ran out")
		}
		n := len(api.Requests())
		b.say("go on")
		m := b.expect(`^\[main\] (— ✓ |— ✗ Error: Reached maximum budget \(\$0\.005\)|\* Not sent to Claude: this thread's budget is spent: \$\S+ of \$0\.005 \(CLAUDEOPS_BUDGET_THREAD_USD\)\.$)`)
		if strings.Contains(m[1], "Reached") {
			b.expect(`^\[main\] \* Stopped: this thread's budget is spent: \$\S+ of \$0\.005 \(CLAUDEOPS_BUDGET_THREAD_USD\)\.$`)
		}
		if strings.Contains(m[1], "Not sent") {
			if got := len(api.Requests()); got != n {
				t.Errorf("%d model requests for a refused message", got-n)
			}
			break
		}
	}
	_ = b.endInput(90 * time.Second)
}

// claudeArgs is the command line of the one claude process whose HOME is
// home.
func claudeArgs(t *testing.T, home string) []string {
	t.Helper()
	var args []string
	testkit.WaitFor(t, testkit.Long, "a claude process", func() bool {
		for _, pid := range processesWithEnv("HOME=" + home) {
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			if err == nil && strings.Contains(string(b), "stream-json") {
				args = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
				return true
			}
		}
		return false
	})
	return args
}
