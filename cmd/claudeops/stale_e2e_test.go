package main

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testkit"
)

// A request left waiting for a person when the bot was killed: once the
// bot has restarted, its prompt and its tool line show what became of it.

// staleCase is what a thread asks, and what its tool line and prompt say
// after the restart.
type staleCase struct {
	say    string
	tool   *regexp.Regexp
	prompt string
}

// staleCases: a permission request and a question, each waiting.
var staleCases = []staleCase{
	{"run touch never.txt", regexp.MustCompile(`touch never\.txt.* — not run: the approval expired when the bot restarted`), "Expired: the bot restarted before anyone decided"},
	{"ask one", regexp.MustCompile(`AskUserQuestion.* — not answered: the question expired when the bot restarted`), "Expired: the bot restarted before anyone decided"},
}

// ranText is what a tool line left running says after the restart.
var ranText = regexp.MustCompile(`sleep 30.* — stopped: the bot restarted while it ran`)

// staleWait bounds the wait for the restarted bot's edits: the test stays
// well under a minute when they never come.
const staleWait = 30 * time.Second

// TestSlackKill9LeavesNoWaitingLine, with the built bot on the fake
// Slack: a permission request and a question wait, their tool lines
// saying so; the bot is killed with SIGKILL and started again. What Slack
// holds then: each prompt says it expired and has no buttons, and each
// tool line says what became of the call, not "waiting".
func TestSlackKill9LeavesNoWaitingLine(t *testing.T) {
	r := startSlackTools(t, fakeanthropic.ChatScript(nil))
	t.Cleanup(func() { killAll(r.home) })
	fs := r.fs
	const general, alice, mention = "C0GENERAL1", "U0ALICE001", "<@U0FAKEBOT1> "
	hasButtons := func(m fakeslack.Message) bool { return len(m.ActionIDs()) > 0 }
	find := func(thread, pattern string, buttons bool) fakeslack.Message {
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
			t.Fatalf("no bot message matching %q in thread %s:\n%s", pattern, thread, slackDump(fs, general, thread))
		}
		return found
	}

	type left struct{ root, prompt, tool string }
	var lefts []left
	for _, c := range staleCases {
		root := fs.Post(alice, general, mention+c.say)
		prompt := find(root, ".", true)
		tool := find(root, `⏸ .* — waiting for`, false)
		lefts = append(lefts, left{root, prompt.TS, tool.TS})
	}
	// A call allowed and running, its line showing its running time.
	ran := fs.Post(alice, general, mention+"run nice sleep 30")
	if err := fs.Click(alice, general, find(ran, ".", true).TS, "claudeops_approval_allow"); err != nil {
		t.Fatal(err)
	}
	running := find(ran, `⚙ .*sleep 30`, false).TS
	// A running time in seconds (a tick early in the run shows
	// milliseconds, under load "· 690ms", and the line is recorded only
	// once it has run a second): the line has run long enough to be
	// recorded.
	if !fs.WaitFor(12*time.Second, func() bool {
		m, _ := fs.Message(general, running)
		return regexp.MustCompile(`⚙ .*sleep 30.* · \d+(\.\d+)?s\b`).MatchString(m.VisibleText())
	}) {
		t.Fatalf("no running time shown:\n%s", slackDump(fs, general, ran))
	}
	killBot(t, r.bot.cmd.Process.Signal, r.home)
	r.bot.done <- <-r.bot.done

	r.bot = startSlackBot(t, r.env)
	final := func(i int) bool {
		p, _ := fs.Message(general, lefts[i].prompt)
		tl, _ := fs.Message(general, lefts[i].tool)
		return !hasButtons(p) && strings.Contains(p.VisibleText(), staleCases[i].prompt) &&
			staleCases[i].tool.MatchString(tl.VisibleText()) && !strings.Contains(tl.VisibleText(), "waiting")
	}
	stopped := func() bool { m, _ := fs.Message(general, running); return ranText.MatchString(m.VisibleText()) }
	fs.WaitFor(staleWait, func() bool { return final(0) && final(1) && stopped() })
	if !stopped() {
		m, _ := fs.Message(general, running)
		t.Errorf("the line of the call left running: %s, want %q\nthread:\n%s", m.VisibleText(), ranText, slackDump(fs, general, ran))
	}
	for i, c := range staleCases {
		if !final(i) {
			p, _ := fs.Message(general, lefts[i].prompt)
			tl, _ := fs.Message(general, lefts[i].tool)
			t.Errorf("%q after the restart:\n  prompt (buttons %v): %s\n  tool line: %s\nwant the prompt to say %q with no buttons, the tool line %q\nthread:\n%s",
				c.say, p.ActionIDs(), p.VisibleText(), tl.VisibleText(), c.prompt, c.tool, slackDump(fs, general, lefts[i].root))
		}
	}
	// The bot is left to the cleanup's kill: a SIGTERM could cut its
	// Recover short, which is not what is tested here.
	for _, v := range fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}

// TestMatrixKill9LeavesNoWaitingLine is the same on a real Dendrite: what
// the room holds after the restart (each event's latest edit) is the
// final state of every prompt and tool line; the expired prompt keeps
// none of the bot's reactions.
func TestMatrixKill9LeavesNoWaitingLine(t *testing.T) {
	r := startMatrixTools(t, fakeanthropic.ChatScript(nil), false)
	t.Cleanup(func() { killAll(r.home) })
	cmd := r.start()
	room := r.room(false)
	alice := r.alice
	byBot := func(root id.EventID, ok func(dendrite.Message) bool) dendrite.Message {
		t.Helper()
		var found dendrite.Message
		if !alice.WaitFor(90*time.Second, func() bool {
			for _, m := range alice.Thread(room, root) {
				if m.Sender == r.bot.ID && ok(m) {
					found = m
					return true
				}
			}
			return false
		}) {
			t.Fatalf("no such bot message in the thread:\n%s", matrixDump(alice, room, root))
		}
		return found
	}
	body := func(root, ev id.EventID) string {
		for _, m := range alice.Thread(room, root) {
			if m.ID == ev {
				return m.Body
			}
		}
		return ""
	}
	type left struct{ root, prompt, tool id.EventID }
	var lefts []left
	for _, c := range staleCases {
		root := alice.SendText(room, c.say, r.bot.ID, "")
		tool := byBot(root, func(m dendrite.Message) bool { return strings.Contains(m.Body, " — waiting for") })
		prompt := byBot(root, func(m dendrite.Message) bool { return m.ID != tool.ID && m.ID != root })
		lefts = append(lefts, left{root, prompt.ID, tool.ID})
	}
	ran := alice.SendText(room, "run nice sleep 30", r.bot.ID, "")
	alice.React(room, byBot(ran, func(m dendrite.Message) bool { return strings.Contains(m.Body, "React ✅ allow") }).ID, "✅")
	running := byBot(ran, func(m dendrite.Message) bool { return strings.Contains(m.Body, "⚙️ **Bash** `nice sleep 30`") }).ID
	if !alice.WaitFor(12*time.Second, func() bool { return regexp.MustCompile(`sleep 30.* · \d+(\.\d+)?s\b`).MatchString(body(ran, running)) }) {
		t.Fatalf("no running time shown:\n%s", matrixDump(alice, room, ran))
	}
	killBot(t, cmd.Process.Signal, r.home)
	_ = cmd.Wait()

	r.start()
	final := func(i int) bool {
		tl := body(lefts[i].root, lefts[i].tool)
		return staleCases[i].tool.MatchString(tl) && !strings.Contains(tl, "waiting")
	}
	// Both prompts, the approval's and the question's (its choices are
	// keycap reactions), say they expired and keep none of the bot's
	// reactions.
	expired := func(i int) bool {
		return strings.Contains(body(lefts[i].root, lefts[i].prompt), staleCases[i].prompt) && !botReacted(alice, room, lefts[i].prompt, r.bot.ID)
	}
	stopped := func() bool { return ranText.MatchString(body(ran, running)) }
	alice.WaitFor(staleWait, func() bool { return final(0) && final(1) && expired(0) && expired(1) && stopped() })
	if !stopped() {
		t.Errorf("the line of the call left running: %q, want %q\nthread:\n%s", body(ran, running), ranText, matrixDump(alice, room, ran))
	}
	for i, c := range staleCases {
		if !final(i) {
			t.Errorf("%q after the restart: tool line %q, want %q\nthread:\n%s", c.say, body(lefts[i].root, lefts[i].tool), c.tool, matrixDump(alice, room, lefts[i].root))
		}
	}
	for i, c := range staleCases {
		if !expired(i) {
			t.Errorf("%q: the prompt after the restart (the bot's reactions left: %v): %q, want it to say %q",
				c.say, botReacted(alice, room, lefts[i].prompt, r.bot.ID), body(lefts[i].root, lefts[i].prompt), c.prompt)
		}
	}
}

// botReacted: the bot's own reactions (its choices) are on the event.
func botReacted(c *dendrite.Client, room id.RoomID, ev id.EventID, bot id.UserID) bool {
	for _, r := range c.Reactions(room, ev) {
		if r.Sender == bot {
			return true
		}
	}
	return false
}

// killBot waits a moment for the bot to record where its prompts are
// (a kill in that moment is another case: the thread is told instead),
// kills it with SIGKILL and waits until its sessions have ended.
func killBot(t *testing.T, signal func(os.Signal) error, home string) {
	t.Helper()
	time.Sleep(time.Second)
	if err := signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
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

// slackDump is a thread as the fake Slack holds it, a line a message.
func slackDump(fs *fakeslack.Server, channel, thread string) string {
	var s strings.Builder
	for _, m := range fs.Thread(channel, thread) {
		s.WriteString("  [" + m.TS + " " + strings.Join(m.ActionIDs(), ",") + "] " + strings.ReplaceAll(m.VisibleText(), "\n", " ⏎ ") + "\n")
	}
	return s.String()
}

// matrixDump is a thread as alice's client holds it, a line an event.
func matrixDump(c *dendrite.Client, room id.RoomID, root id.EventID) string {
	var s strings.Builder
	for _, m := range c.Thread(room, root) {
		s.WriteString("  [" + m.ID.String() + " " + m.Sender.String() + "] " + strings.ReplaceAll(m.Body, "\n", " ⏎ ") + "\n")
	}
	return s.String()
}
