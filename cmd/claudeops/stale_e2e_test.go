package main

import (
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

// staleCase is a request left waiting for a person when the bot was
// killed: what a thread asks, and what its tool line and prompt must
// say once the bot has restarted.
type staleCase struct {
	say, tool, prompt string
}

// staleCases: a permission request and a question, each waiting.
var staleCases = []staleCase{
	{say: "run touch never.txt", tool: `touch never\.txt.* — not run: the approval expired when the bot restarted`, prompt: `Expired: the bot restarted before anyone decided`},
	{say: "ask one", tool: `AskUserQuestion.* — not answered: the question expired when the bot restarted`, prompt: `Expired: the bot restarted before anyone decided`},
}

// TestSlackKill9LeavesNoWaitingLine, with the built bot on the fake
// Slack: a permission request and a question wait, their tool lines
// saying so; the bot is killed with SIGKILL and started again. What Slack
// holds then: each prompt says it expired and has no buttons, and each
// tool line says what became of the call, not "waiting".
func TestSlackKill9LeavesNoWaitingLine(t *testing.T) {
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
	t.Cleanup(func() { killAll(home) })
	const general, alice, mention = "C0GENERAL1", "U0ALICE001", "<@U0FAKEBOT1> "
	hasButtons := func(m fakeslack.Message) bool { return len(m.ActionIDs()) > 0 }
	find := func(b *slackBot, thread, pattern string, buttons bool) fakeslack.Message {
		t.Helper()
		re := regexp.MustCompile(pattern)
		var found fakeslack.Message
		if !fs.WaitFor(90*time.Second, func() bool {
			for _, m := range fs.Thread(general, thread) {
				if m.BotID != "" && re.MatchString(m.VisibleText()) && hasButtons(m) == buttons {
					found = m
					return true
				}
			}
			return false
		}) {
			t.Fatalf("no bot message matching %q in thread %s:\n%s\nthe bot's log:\n%s", pattern, thread, slackDump(fs, general, thread), b.stderr.String())
		}
		return found
	}
	b := startSlackBot(t, env)
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect; its log:\n%s", b.stderr.String())
	}
	type left struct{ root, prompt, tool string }
	var lefts []left
	for _, c := range staleCases {
		root := fs.Post(alice, general, mention+c.say)
		prompt := find(b, root, ".", true)
		tool := find(b, root, `⏸ .* — waiting for`, false)
		lefts = append(lefts, left{root, prompt.TS, tool.TS})
	}
	// The bot records where a prompt is once Slack has it: a kill in that
	// moment is another case (the thread is told instead).
	time.Sleep(time.Second)
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	b.done <- <-b.done
	waitOrphans(t, home)

	b = startSlackBot(t, env)
	final := func(i int) bool {
		p, _ := fs.Message(general, lefts[i].prompt)
		tl, _ := fs.Message(general, lefts[i].tool)
		return !hasButtons(p) && regexp.MustCompile(staleCases[i].prompt).MatchString(p.VisibleText()) &&
			regexp.MustCompile(staleCases[i].tool).MatchString(tl.VisibleText()) && !strings.Contains(tl.VisibleText(), "waiting")
	}
	fs.WaitFor(30*time.Second, func() bool { return final(0) && final(1) })
	for i, c := range staleCases {
		if !final(i) {
			l := lefts[i]
			p, _ := fs.Message(general, l.prompt)
			tl, _ := fs.Message(general, l.tool)
			t.Errorf("%q after the restart:\n  prompt (buttons %v): %s\n  tool line: %s\nwant the prompt to match %q with no buttons, the tool line %q\nthread:\n%s",
				c.say, p.ActionIDs(), p.VisibleText(), tl.VisibleText(), c.prompt, c.tool, slackDump(fs, general, l.root))
		}
	}
	// The bot is left to the cleanup's kill: a SIGTERM could cut its
	// Recover short, which is not what is tested here.
	for _, v := range fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}

// slackDump is a thread as the fake Slack holds it, a line a message.
func slackDump(fs *fakeslack.Server, channel, thread string) string {
	var s strings.Builder
	for _, m := range fs.Thread(channel, thread) {
		s.WriteString("  [" + m.TS + " " + strings.Join(m.ActionIDs(), ",") + "] " + strings.ReplaceAll(m.VisibleText(), "\n", " ⏎ ") + "\n")
	}
	return s.String()
}

// waitOrphans waits until the sessions of a killed bot (every process
// with its HOME) have ended: their keeper ends them.
func waitOrphans(t *testing.T, home string) {
	t.Helper()
	if !testkit.Until(testkit.Long, func() bool { return len(processesWithEnv("HOME="+home)) == 0 }) {
		killAll(home)
		t.Fatal("the orphaned claude did not exit after its bot died")
	}
}

// killAll kills what still runs with HOME=home (what a failure left).
func killAll(home string) {
	for _, pid := range processesWithEnv("HOME=" + home) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
