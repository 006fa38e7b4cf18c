package main

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// TestCatchUpSetting: CLAUDEOPS_CATCH_UP is a duration, 24h unless set,
// 0 for off; below 0 (or not a duration) is a configuration problem.
func TestCatchUpSetting(t *testing.T) {
	tests := []struct {
		value string // "" leaves it unset
		want  time.Duration
		bad   string
	}{
		{"", 24 * time.Hour, ""},
		{"0", 0, ""},
		{"90m", 90 * time.Minute, ""},
		{"-1h", 0, "CLAUDEOPS_CATCH_UP=-1h: want 0 (Slack catch-up off) or a duration"},
		{"a while", 0, `CLAUDEOPS_CATCH_UP="a while": want a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			env := []string{"HOME=" + t.TempDir(), "CLAUDEOPS_WORKDIR=" + t.TempDir()}
			if tt.value != "" {
				env = append(env, "CLAUDEOPS_CATCH_UP="+tt.value)
			}
			c, err := loadConfig(env)
			var ce *configError
			switch {
			case tt.bad == "" && err != nil:
				t.Fatalf("unexpected problems:\n%v", err)
			case tt.bad == "" && c.Platforms.Slack.CatchUp != tt.want:
				t.Errorf("catch-up %v, want %v", c.Platforms.Slack.CatchUp, tt.want)
			case tt.bad != "" && (!errors.As(err, &ce) || len(ce.lines()) != 1 || !strings.Contains(ce.lines()[0], tt.bad)):
				t.Errorf("problems %v, want one line with %q", err, tt.bad)
			}
		})
	}
}

// slackBot is the built bot (the test binary re-executed as main) on a
// fake Slack.
type slackBot struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan error
}

func startSlackBot(t *testing.T, env []string) *slackBot {
	t.Helper()
	b := &slackBot{cmd: exec.Command(os.Args[0]), stderr: &lockedBuffer{}, done: make(chan error, 1)}
	b.cmd.Env = append(testrunner.Explicit(env), "CLAUDEOPS_TEST_RUN_MAIN=1")
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.done <- b.cmd.Wait() }()
	t.Cleanup(func() {
		_ = b.cmd.Process.Kill()
		<-b.done
	})
	return b
}

// stop sends SIGTERM and waits for a clean exit.
func (b *slackBot) stop(t *testing.T) {
	t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-b.done:
		b.done <- err
		if err != nil {
			t.Fatalf("bot exit: %v; its log:\n%s", err, b.stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("the bot did not stop; its log:\n%s", b.stderr.String())
	}
}

// TestSlackCatchUpAcrossRestart, with the built bot: a thread talks on
// Slack; the bot is stopped; a reply in the thread and a new mention are
// posted and Slack gives up delivering them; the bot started again on the
// same state answers both, each thread told once it was picked up late.
// A negative CLAUDEOPS_CATCH_UP stops the bot before it starts (78).
func TestSlackCatchUpAcrossRestart(t *testing.T) {
	bin := testcli.Bin(t)
	fs := fakeslack.Start(t, fakeslack.Options{Strict: true})
	api := fakeanthropic.Start(t, fakeanthropic.ChatScript(nil))
	home, work, state := t.TempDir(), t.TempDir(), t.TempDir()
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"SLACK_API_URL="+fs.URL+"/api/", "SLACK_BOT_TOKEN="+fs.Opts.BotToken, "SLACK_APP_TOKEN="+fs.Opts.AppToken,
		"CLAUDEOPS_ALLOWED_USERS=U0ALICE001", "CLAUDEOPS_LOG_LEVEL=debug",
	)
	env = append(env, testrunner.Env(t, home)...)
	const general, alice, mention = "C0GENERAL1", "U0ALICE001", "<@U0FAKEBOT1> "
	says := func(b *slackBot, thread, pattern string) {
		t.Helper()
		re := regexp.MustCompile(pattern)
		if !fs.WaitFor(90*time.Second, func() bool {
			for _, m := range fs.Thread(general, thread) {
				if m.BotID != "" && re.MatchString(m.VisibleText()) {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("no bot message matching %q in thread %s; the bot's log:\n%s", pattern, thread, b.stderr.String())
		}
	}

	b := startSlackBot(t, env)
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect; its log:\n%s", b.stderr.String())
	}
	root := fs.Post(alice, general, mention+"hello there")
	says(b, root, `ok: hello there`)
	says(b, root, `✓ .* turns?$`)
	b.stop(t)

	fs.Reply(alice, general, root, "missed while down")
	topic := fs.Post(alice, general, mention+"a new topic")
	fs.GiveUp()

	b = startSlackBot(t, env)
	says(b, root, `Picked up late`)
	says(b, root, `ok: missed while down`)
	says(b, topic, `Picked up late`)
	says(b, topic, `ok: a new topic`)
	for _, text := range []string{"hello there", "missed while down", "a new topic"} {
		n := 0
		for _, r := range api.Requests() {
			if strings.Contains(r.LastUserText(), text) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q reached the model %d times, want once", text, n)
		}
	}
	if !strings.Contains(b.stderr.String(), "slack: caught up") {
		t.Errorf("no catch-up in the log:\n%s", b.stderr.String())
	}
	b.stop(t)
	for _, v := range fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}

	// Misconfigured: nothing starts.
	bad := startSlackBot(t, append(env, "CLAUDEOPS_CATCH_UP=-5m"))
	var exit *exec.ExitError
	select {
	case err := <-bad.done:
		bad.done <- err
		if !errors.As(err, &exit) || exit.ExitCode() != 78 || !strings.Contains(bad.stderr.String(), "CLAUDEOPS_CATCH_UP=-5m") {
			t.Errorf("exit %v, want 78 naming CLAUDEOPS_CATCH_UP; stderr:\n%s", err, bad.stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatal("a misconfigured bot did not exit")
	}
}
