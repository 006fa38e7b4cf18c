package slack_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/bot/scheduled"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// End-to-end tests: people on our fake Slack, the bot with the Slack
// adapter, the real Claude Code CLI, the fake model API.

const (
	alice   = "U0ALICE001"
	bob     = "U0BOB00001"
	general = "C0GENERAL1"
	botUser = "U0FAKEBOT1"
	mention = "<@" + botUser + "> "
	wait    = 90 * time.Second
)

type harness struct {
	t    testing.TB
	fs   *fakeslack.Server
	api  *fakeanthropic.Server
	st   *store.Store
	b    *bot.Bot
	ad   *slack.Adapter
	dir  string
	stop func()
}

func newHarness(t testing.TB, script fakeanthropic.Script, fo fakeslack.Options, mod func(*bot.Config, *slack.Config)) *harness {
	t.Helper()
	bin := testcli.Bin(t)
	h := &harness{t: t, dir: t.TempDir()}
	h.fs = fakeslack.Start(t, fo)
	h.api = fakeanthropic.Start(t, script)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	h.st = st
	home := t.TempDir()
	bc := bot.Config{
		Runner:       testrunner.Runner(t, home),
		ClaudeBin:    bin,
		Env:          testkit.CLIEnv(home, h.api.URL, "CLAUDE_CODE_MAX_RETRIES=1"),
		Workdir:      h.dir,
		AllowedUsers: []string{alice, bob},
		MaxSessions:  4,
		StopGrace:    3 * time.Second,
		// Scheduled runs (RunScheduled) are the schedules extension's.
		Extensions: []thread.Extension{scheduled.New(scheduled.Config{})},
	}
	sc := slack.Config{
		BotToken: h.fs.Opts.BotToken, AppToken: h.fs.Opts.AppToken, SigningSecret: h.fs.Opts.SigningSecret,
		APIURL: h.fs.URL + "/api/", EditInterval: 200 * time.Millisecond, RateScale: fo.RateScale, Streaming: fo.Streaming,
	}
	if mod != nil {
		mod(&bc, &sc)
	}
	ad, err := slack.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	h.ad = ad
	h.b = bot.New(bc, st)
	h.b.AddAdapter(ad)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = h.b.Run(ctx) }()
	go func() { defer wg.Done(); _ = ad.Run(ctx, h.b.Deliver) }()
	h.stop = func() {
		cancel()
		wg.Wait()
		ad.Close()
		st.Close()
	}
	t.Cleanup(h.stop)
	if !h.fs.WaitConnections(1, wait) {
		t.Fatal("the adapter did not connect over Socket Mode")
	}
	return h
}

// waitThread waits until the thread holds a bot message matching re, and
// returns it.
func (h *harness) waitThread(threadTS, pattern string) fakeslack.Message {
	h.t.Helper()
	re := regexp.MustCompile(pattern)
	var found fakeslack.Message
	ok := h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Thread(general, threadTS) {
			if m.BotID != "" && re.MatchString(m.VisibleText()) {
				found = m
				return true
			}
		}
		return false
	})
	if !ok {
		h.t.Fatalf("no bot message matching %q in thread %s:\n%s", pattern, threadTS, h.dump(threadTS))
	}
	return found
}

// waitPrompt waits for an open approval prompt other than the one at
// skipTS, and returns it.
func (h *harness) waitPrompt(threadTS, skipTS string) fakeslack.Message {
	h.t.Helper()
	var found fakeslack.Message
	if !h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Thread(general, threadTS) {
			if m.BotID != "" && m.TS != skipTS && strings.Contains(strings.Join(m.ActionIDs(), ","), "claudeops_approval_allow") {
				found = m
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("no open approval prompt in thread %s:\n%s", threadTS, h.dump(threadTS))
	}
	return found
}

func (h *harness) dump(threadTS string) string {
	var b strings.Builder
	for _, m := range h.fs.Thread(general, threadTS) {
		who := m.User
		if m.BotID != "" {
			who = "bot"
		}
		b.WriteString("  [" + who + " " + m.TS + "] " + strings.ReplaceAll(m.VisibleText(), "\n", " ⏎ ") + "\n")
	}
	return b.String()
}

func (h *harness) ephemeral(user, pattern string) {
	h.t.Helper()
	h.ephemeralIn(general, user, pattern)
}

func (h *harness) noViolations() {
	h.t.Helper()
	for _, v := range h.fs.Violations() {
		h.t.Errorf("Slack violation: %s", v)
	}
}

func TestMentionGetsThreadedReply(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)
	ts := h.fs.Post(alice, general, mention+"hello there")
	h.waitThread(ts, `ok: hello there`)
	h.waitThread(ts, `✓ .* · \$0\.\d+ · 1 turn`)
	// A reply in the thread continues it without a mention.
	h.fs.Reply(alice, general, ts, "and again")
	h.waitThread(ts, `ok: and again`)
	// One post arrives as message + app_mention: one turn each.
	if n := len(h.api.Requests()); n != 2 {
		t.Errorf("model requests: %d, want 2", n)
	}
	// The bot's messages are all in the thread; none at top level.
	for _, m := range h.fs.Messages(general) {
		if m.BotID != "" && m.ThreadTS == "" {
			t.Errorf("bot posted at top level: %q", m.VisibleText())
		}
	}
	h.noViolations()
}

func TestApprovalByButtons(t *testing.T) {
	h := newHarness(t, script(nil), fakeslack.Options{}, nil)
	ts := h.fs.Post(alice, general, mention+"run touch made.txt")
	prompt := h.waitPrompt(ts, "")
	if ids := strings.Join(prompt.ActionIDs(), ","); !strings.Contains(ids, "claudeops_approval_allow") || !strings.Contains(ids, "claudeops_approval_deny") {
		t.Fatalf("prompt buttons: %s", ids)
	}
	// Bob may use the bot but did not start the thread.
	if err := h.fs.Click(bob, general, prompt.TS, "claudeops_approval_allow"); err != nil {
		t.Fatal(err)
	}
	h.ephemeral(bob, `Only `+alice+` \(who started this thread\) or an admin can decide this`)
	if err := h.fs.Click(alice, general, prompt.TS, "claudeops_approval_allow"); err != nil {
		t.Fatal(err)
	}
	h.waitThread(ts, `Allowed by `+alice)
	h.waitThread(ts, `tool result: `)
	h.waitThread(ts, `✓ .* turns?$`)
	if _, err := os.Stat(filepath.Join(h.dir, "made.txt")); err != nil {
		t.Error(err)
	}
	updated, _ := h.fs.Message(general, prompt.TS)
	if len(updated.ActionIDs()) != 0 {
		t.Errorf("buttons left on a decided prompt: %v", updated.ActionIDs())
	}
	// A click on the old prompt (its buttons are gone) cannot decide again.
	if err := h.fs.Click(alice, general, prompt.TS, "claudeops_approval_deny"); err == nil {
		h.ephemeral(alice, `no longer open|Already decided`)
	}

	// Deny with a reason, typed in the thread.
	h.fs.Reply(alice, general, ts, "run touch never.txt")
	h.waitPrompt(ts, prompt.TS)
	h.fs.Reply(alice, general, ts, "deny too risky today")
	h.waitThread(ts, `Denied by `+alice+`: too risky today`)
	h.waitThread(ts, `tool result: Denied by `+alice+`: too risky today`)
	if _, err := os.Stat(filepath.Join(h.dir, "never.txt")); !os.IsNotExist(err) {
		t.Errorf("denied command ran: %v", err)
	}
	h.noViolations()
}

// The model of these tests: see fakeanthropic.ChatScript.
var (
	script     = fakeanthropic.ChatScript
	text       = fakeanthropic.TextReply
	longAnswer = fakeanthropic.LongAnswer
)
