package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// End-to-end tests of the bot's own tools for Claude (send_file,
// read_thread) on Slack: the built bot with the real CLI, the fake model
// API and the fake Slack. The oracles are outside the bot: what the fake
// Slack recorded, and what the CLI sent back to the model.

const (
	sendFileTool   = "mcp__claudeops__send_file"
	readThreadTool = "mcp__claudeops__read_thread"
)

// reportBytes is the file send_file posts: line ends of both kinds, a tab,
// and text beyond ASCII, so that any rewriting on the way shows.
var reportBytes = []byte("# Nightly report\r\n\n| check\t| result |\n|---|---|\n| build | ✓ passed |\n| deploy | 🚀 eu-west-2 |\n")

// toolScript is the fake model of these tests: a prompt containing a key
// of calls is answered with that tool call; the tool's result with a text
// naming it.
func toolScript(calls map[string]fakeanthropic.Block) fakeanthropic.Script {
	return func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) > 0 {
			return fakeanthropic.TextReply("the tool has answered")
		}
		for key, call := range calls {
			if strings.Contains(req.LastUserText(), key) {
				// A fresh tool_use id per call.
				return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse(call.Name, call.Input)}}
			}
		}
		return fakeanthropic.TextReply("ok: " + req.LastUserText())
	}
}

// toolResultFor waits for the request that carries the result of a call
// of tool, and returns that result.
func toolResultFor(t *testing.T, api *fakeanthropic.Server, tool string, log func() string) fakeanthropic.ToolResult {
	t.Helper()
	var res fakeanthropic.ToolResult
	testkit.WaitForf(t, 90*time.Second, func() bool {
		for _, req := range api.Requests() {
			for _, m := range req.Messages {
				for _, b := range m.Content {
					if b.Type != "tool_use" || b.Name != tool {
						continue
					}
					if r, ok := req.ToolResult(b.ID); ok {
						res = r
						return true
					}
				}
			}
		}
		return false
	}, func() string { return "no result of " + tool + " reached the model; the bot's log:\n" + log() })
	return res
}

// slackToolsRun is the bot on a fake Slack, with CLAUDEOPS_WORKDIR work,
// its sessions' HOME home, and env to start it again.
type slackToolsRun struct {
	fs         *fakeslack.Server
	api        *fakeanthropic.Server
	work, home string
	env        []string
	bot        *slackBot
}

// startSlackTools starts it; extra (NAME=value) comes after the rest of
// its environment, and so wins.
func startSlackTools(t *testing.T, script fakeanthropic.Script, extra ...string) *slackToolsRun {
	t.Helper()
	bin := testcli.Bin(t)
	fs := fakeslack.Start(t, fakeslack.Options{Strict: true})
	api := fakeanthropic.Start(t, script)
	home, work, state := t.TempDir(), t.TempDir(), t.TempDir()
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"SLACK_API_URL="+fs.URL+"/api/", "SLACK_BOT_TOKEN="+fs.Opts.BotToken, "SLACK_APP_TOKEN="+fs.Opts.AppToken,
		"CLAUDEOPS_ALLOWED_USERS=U0ALICE001",
	)
	env = append(env, testrunner.Env(t, home)...)
	env = append(env, extra...)
	b := startSlackBot(t, env)
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect; its log:\n%s", b.stderr.String())
	}
	return &slackToolsRun{fs: fs, api: api, work: work, home: home, env: env, bot: b}
}

// noPrompt fails when the thread shows an approval prompt: the built-in
// rule allows the bot's own tools.
func (r *slackToolsRun) noPrompt(t *testing.T, channel, root string) {
	t.Helper()
	for _, m := range r.fs.Thread(channel, root) {
		if slices.Contains(m.ActionIDs(), "claudeops_approval_allow") {
			t.Errorf("an approval prompt was posted for the bot's own tool: %q", m.VisibleText())
		}
	}
}

// TestToolsSlackSendFile: Claude calls send_file on report.md of its
// working directory; the file is shared into the thread that asked, byte
// for byte, with the comment, and no approval is asked.
func TestToolsSlackSendFile(t *testing.T) {
	r := startSlackTools(t, toolScript(map[string]fakeanthropic.Block{
		"send the nightly report": fakeanthropic.ToolUse(sendFileTool, map[string]string{"path": "report.md", "comment": "nightly report"}),
	}))
	if err := os.WriteFile(filepath.Join(r.work, "report.md"), reportBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	const general, alice = "C0GENERAL1", "U0ALICE001"
	other := r.fs.Post(alice, general, "<@U0FAKEBOT1> hello")
	root := r.fs.Post(alice, general, "<@U0FAKEBOT1> send the nightly report")

	var shared fakeslack.Message
	if !r.fs.WaitFor(90*time.Second, func() bool {
		for _, m := range r.fs.Thread(general, root) {
			if len(m.Files) > 0 {
				shared = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no file in the thread: %+v; the bot's log:\n%s", r.fs.Thread(general, root), r.bot.stderr.String())
	}
	if len(shared.Files) != 1 {
		t.Fatalf("the share carries %d files, want 1: %+v", len(shared.Files), shared.Files)
	}
	f := shared.Files[0]
	if !bytes.Equal(f.Content, reportBytes) {
		t.Errorf("the shared file holds %q, want %q", f.Content, reportBytes)
	}
	if f.Name != "report.md" || f.Channel != general || f.ThreadTS != root {
		t.Errorf("file %q shared in %s thread %s, want report.md in %s thread %s", f.Name, f.Channel, f.ThreadTS, general, root)
	}
	if shared.User != r.fs.Opts.BotUserID || shared.ThreadTS != root {
		t.Errorf("the share is by %s in thread %s, want the bot in %s", shared.User, shared.ThreadTS, root)
	}
	if !strings.Contains(shared.Text, "nightly report") {
		t.Errorf("the share's comment is %q, want it to say %q", shared.Text, "nightly report")
	}
	res := toolResultFor(t, r.api, sendFileTool, r.bot.stderr.String)
	if res.IsError || !strings.Contains(res.Content, "report.md") {
		t.Errorf("send_file's result: %+v", res)
	}
	if !r.fs.WaitFor(90*time.Second, func() bool {
		return slices.ContainsFunc(r.fs.Thread(general, root), func(m fakeslack.Message) bool {
			return strings.Contains(m.VisibleText(), "the tool has answered")
		})
	}) {
		t.Errorf("the turn did not end with the model's answer: %+v", r.fs.Thread(general, root))
	}
	r.noPrompt(t, general, root)
	// Nothing else got a file: not the other thread, not the channel.
	for _, m := range r.fs.Messages(general) {
		if len(m.Files) > 0 && m.TS != shared.TS {
			t.Errorf("another message carries a file: %+v", m)
		}
	}
	for _, m := range r.fs.Thread(general, other) {
		if len(m.Files) > 0 {
			t.Errorf("a file in the other thread: %+v", m)
		}
	}
	r.bot.stop(t)
	for _, v := range r.fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}

// TestToolsSlackReadThread: people talk in a thread without mentioning the
// bot; then it is mentioned there, and Claude calls read_thread. What the
// CLI hands the model has those messages, with their authors' ids, and
// nothing from elsewhere in the channel.
func TestToolsSlackReadThread(t *testing.T) {
	r := startSlackTools(t, toolScript(map[string]fakeanthropic.Block{
		"what did bob say": fakeanthropic.ToolUse(readThreadTool, map[string]int{"limit": 20}),
	}))
	const general, alice, bob = "C0GENERAL1", "U0ALICE001", "U0BOB00001"
	r.fs.Post(bob, general, "decoy: unrelated chatter in the channel")
	root := r.fs.Post(alice, general, "deploy window opens at 14:00 UTC")
	r.fs.Reply(bob, general, root, "the canary failed on eu-west-2, rolling back")
	r.fs.Reply(alice, general, root, "ok, holding the release & waiting <for> bob")
	r.fs.Reply(alice, general, root, "<@U0FAKEBOT1> what did bob say?")

	res := toolResultFor(t, r.api, readThreadTool, r.bot.stderr.String)
	if res.IsError {
		t.Fatalf("read_thread failed: %s", res.Content)
	}
	t.Logf("read_thread's result:\n%s", res.Content)
	wantInOrder := []string{
		alice, "deploy window opens at 14:00 UTC",
		bob, "the canary failed on eu-west-2, rolling back",
		alice, "ok, holding the release & waiting <for> bob",
		alice, "what did bob say?",
	}
	rest := res.Content
	for _, want := range wantInOrder {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("read_thread's result lacks %q (in order); it was:\n%s", want, res.Content)
		}
		rest = rest[i+len(want):]
	}
	if strings.Contains(res.Content, "decoy") {
		t.Errorf("read_thread returned a message from outside the thread:\n%s", res.Content)
	}
	if !r.fs.WaitFor(90*time.Second, func() bool {
		return slices.ContainsFunc(r.fs.Thread(general, root), func(m fakeslack.Message) bool {
			return strings.Contains(m.VisibleText(), "the tool has answered")
		})
	}) {
		t.Errorf("the turn did not end with the model's answer: %+v", r.fs.Thread(general, root))
	}
	r.noPrompt(t, general, root)
	r.bot.stop(t)
	for _, v := range r.fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}
