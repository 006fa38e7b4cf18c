package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// End-to-end tests of /compact from chat: the built bot with the real CLI
// and the fake model API, on the fake Slack and on a real homeserver. The
// oracles are outside the bot: what the thread shows (the CLI's compaction
// with its figures), and what the model is sent after it.

// slashSummary is the fake model's summary when the CLI compacts.
const slashSummary = "SUMMARY-MARKER-77: alice wants a fruit kept in mind"

// compactScript answers the CLI's summarization request with slashSummary,
// anything else with "ok: <text>".
func compactScript(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
	if req.IsCompaction() {
		return fakeanthropic.TextReply(slashSummary)
	}
	// After a compaction the CLI sends the summary and the next message
	// as one user message: its last line is what was written.
	text := req.LastUserText()
	return fakeanthropic.TextReply("ok: " + text[strings.LastIndex(text, "\n")+1:])
}

var compactedLine = regexp.MustCompile(`Context compacted: \d+ → \d+ tokens`)

// checkCompacted: the summarization request reached the model, and the
// request after it starts from the summary, without the conversation
// before it.
func checkCompacted(t *testing.T, api *fakeanthropic.Server, before, after string) {
	t.Helper()
	reqs := api.Requests()
	if !slices.ContainsFunc(reqs, (*fakeanthropic.Request).IsCompaction) {
		t.Fatal("no summarization request reached the model")
	}
	var last *fakeanthropic.Request
	for _, r := range reqs {
		if strings.HasSuffix(r.LastUserText(), "\n"+after) {
			last = r
		}
	}
	if last == nil {
		t.Fatalf("%q never reached the model", after)
	}
	if tr := last.Transcript(); !strings.Contains(tr, slashSummary) || strings.Contains(tr, before) {
		t.Errorf("the request after /compact does not start from the summary:\n%s", tr)
	}
}

// TestSlashCompactSlack: in a thread, "@bot /compact" compacts the
// session; the thread shows the CLI's figures and the next turn starts from
// the summary. A reply " /context" (Slack's composer would take a leading
// "/" for a Slack command; a space before it sends it as a message) shows
// the context, and `/claude /context` opens a thread that does the same.
func TestSlashCompactSlack(t *testing.T) {
	r := startSlackTools(t, compactScript)
	const general, alice = "C0GENERAL1", "U0ALICE001"
	root := r.fs.Post(alice, general, "<@U0FAKEBOT1> note the pineapple")
	said := func(ch, thread, what string, ok func(string) bool) {
		t.Helper()
		if !r.fs.WaitFor(90*time.Second, func() bool {
			return slices.ContainsFunc(r.fs.Thread(ch, thread), func(m fakeslack.Message) bool { return ok(m.VisibleText()) })
		}) {
			t.Fatalf("the thread never showed %s: %+v; the bot's log:\n%s", what, r.fs.Thread(ch, thread), r.bot.stderr.String())
		}
	}
	said(general, root, "the answer", func(s string) bool { return strings.Contains(s, "ok: note the pineapple") })
	r.fs.Reply(alice, general, root, "<@U0FAKEBOT1> /compact")
	said(general, root, "the compaction", compactedLine.MatchString)
	r.fs.Reply(alice, general, root, "after the compaction")
	said(general, root, "the next answer", func(s string) bool { return strings.Contains(s, "ok: after the compaction") })
	checkCompacted(t, r.api, "note the pineapple", "after the compaction")

	r.fs.Reply(alice, general, root, " /context")
	said(general, root, "the context", func(s string) bool { return strings.Contains(s, "Context Usage") })

	if err := r.fs.Slash(alice, general, "/claude", "/context"); err != nil {
		t.Fatal(err)
	}
	var opened string
	if !r.fs.WaitFor(90*time.Second, func() bool {
		for _, m := range r.fs.Messages(general) {
			if m.User == r.fs.Opts.BotUserID && strings.Contains(m.Text, "asked: /context") {
				opened = m.TS
				return true
			}
		}
		return false
	}) {
		t.Fatalf("/claude /context opened no thread: %+v", r.fs.Messages(general))
	}
	said(general, opened, "the context", func(s string) bool { return strings.Contains(s, "Context Usage") })
	r.bot.stop(t)
	for _, v := range r.fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}

// TestSlashCompactMatrix: in a thread on a real homeserver, "/compact"
// (with the bot mentioned, and without: the thread has a session)
// compacts the session; the thread shows the CLI's figures and the next
// turn starts from the summary.
func TestSlashCompactMatrix(t *testing.T) {
	r := startMatrixTools(t, compactScript, false)
	cmd := r.start()
	room := r.room(false)
	root := r.alice.SendText(room, "note the pineapple", r.bot.ID, "")
	r.botSaid(room, root, "the answer", func(m dendrite.Message) bool { return strings.Contains(m.Body, "ok: note the pineapple") })
	r.alice.SendText(room, "/compact", r.bot.ID, root)
	r.botSaid(room, root, "the compaction", func(m dendrite.Message) bool { return compactedLine.MatchString(m.Body) })
	r.alice.SendText(room, "after the compaction", "", root)
	r.botSaid(room, root, "the next answer", func(m dendrite.Message) bool { return strings.Contains(m.Body, "ok: after the compaction") })
	checkCompacted(t, r.api, "note the pineapple", "after the compaction")

	r.alice.SendText(room, "/compact", "", root)
	r.botSaid(room, root, "a second compaction", func(m dendrite.Message) bool {
		return compactedLine.MatchString(m.Body) && strings.Count(threadText(r, room, root), "Context compacted") >= 2
	})
	r.stop(cmd)
}

// threadText is the bot's messages of root's thread, one after another.
func threadText(r *matrixToolsRun, room id.RoomID, root id.EventID) string {
	var b strings.Builder
	for _, m := range r.alice.Thread(room, root) {
		if m.Sender == r.bot.ID {
			b.WriteString(m.Body + "\n")
		}
	}
	return b.String()
}
