package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// TestSurface: the rest of what a Slack user meets — DMs, /claude, people
// who may not use the bot, edits and other bots ignored, model output that
// tries to ping, long tool output as a file.
func TestSurface(t *testing.T) {
	h := newHarness(t, surfaceReply, fakeslack.Options{}, nil)

	t.Run("model output cannot ping", func(t *testing.T) {
		ts := h.fs.Post(alice, general, mention+"ping everyone")
		m := h.waitThread(ts, `look!`)
		for _, s := range []string{m.Text, string(m.Blocks)} {
			if strings.Contains(s, "<!channel>") || strings.Contains(s, "<@"+bob+">") || strings.Contains(s, " @here") {
				t.Errorf("live mention in %q", s)
			}
		}
	})

	t.Run("long tool output goes up as a file", func(t *testing.T) {
		ts := h.fs.Post(alice, general, mention+"count")
		h.waitThread(ts, `counted`)
		if !h.fs.WaitFor(wait, func() bool {
			for _, m := range h.fs.Thread(general, ts) {
				for _, f := range m.Files {
					if strings.HasPrefix(string(f.Content), "1\n2\n3\n") && strings.Contains(string(f.Content), "\n3000") {
						return true
					}
				}
			}
			return false
		}) {
			t.Errorf("no file with the whole output:\n%s", h.dump(ts))
		}
	})

	t.Run("direct message", func(t *testing.T) {
		ch, ts := h.fs.DM(alice, "hello in private")
		if !h.fs.WaitFor(wait, func() bool {
			for _, m := range h.fs.Thread(ch, ts) {
				if m.BotID != "" && strings.Contains(m.VisibleText(), "ok: hello in private") {
					return true
				}
			}
			return false
		}) {
			t.Error("no answer in the DM")
		}
	})

	t.Run("slash command", func(t *testing.T) {
		if err := h.fs.Slash(alice, general, "/claude", "status"); err != nil {
			t.Fatal(err)
		}
		// The bot opens a thread saying who asked, and answers there.
		if !h.fs.WaitFor(wait, func() bool {
			for _, root := range h.fs.Messages(general) {
				if root.BotID == "" || !strings.Contains(root.VisibleText(), "<@"+alice+"> asked: status") {
					continue
				}
				for _, m := range h.fs.Thread(general, root.TS) {
					if m.BotID != "" && strings.Contains(m.VisibleText(), "State: no session yet") {
						return true
					}
				}
			}
			return false
		}) {
			t.Error("/claude status not answered in its thread")
		}
	})

	t.Run("not allowed user is told", func(t *testing.T) {
		h.fs.AddUser(fakeslack.User{ID: "U0MALLORY1", Name: "mallory"})
		before := len(h.api.Requests())
		h.fs.Post("U0MALLORY1", general, mention+"let me in")
		h.ephemeral("U0MALLORY1", `not allowed to use this bot`)
		if n := len(h.api.Requests()); n != before {
			t.Errorf("a refused user's message reached Claude")
		}
	})

	t.Run("edits and other bots are ignored", func(t *testing.T) {
		ts := h.fs.Post(alice, general, mention+"original")
		h.waitThread(ts, `ok: original`)
		h.waitThread(ts, `✓ .* turns?$`)
		before := len(h.api.Requests())
		if err := h.fs.EditMessage(alice, general, ts, mention+"edited"); err != nil {
			t.Fatal(err)
		}
		// Nothing happens, and nothing announces that: a turn the edit
		// wrongly started would reach the model within this pause.
		time.Sleep(500 * time.Millisecond)
		if n := len(h.api.Requests()); n != before {
			t.Errorf("an edit started a turn")
		}
	})
	h.noViolations()
}

// surfaceReply is TestSurface's Claude: it tries to ping when asked to, runs
// a tool with long output for "count", and otherwise echoes the message.
func surfaceReply(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
	if trs := req.ToolResults(); len(trs) > 0 {
		return text("counted")
	}
	last := req.LastUserText()
	switch {
	case strings.HasSuffix(last, "ping everyone"):
		return text("Hey <!channel> and <@" + bob + "> and @here, look!")
	case strings.HasSuffix(last, "count"):
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "seq 1 3000"})}}
	}
	return text("ok: " + last)
}
