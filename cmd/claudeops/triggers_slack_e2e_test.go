package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// TestTriggerOnSlack: a generic trigger's event starts a thread of its own
// in its Slack channel; the first message names the trigger and shows the
// event's "<@U123>" and "<!channel>" as text: the fake Slack (mentions
// forbidden) sees no live mention in anything the bot posted.
func TestTriggerOnSlack(t *testing.T) {
	fs := fakeslack.Start(t, fakeslack.Options{Strict: true, ForbidMentions: true})
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.TextReply("noted")
	})
	home, work, state, dir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	const general, token = "C0GENERAL1", "slack-trigger-token-0123456789"
	tokFile, file := filepath.Join(dir, "token"), filepath.Join(dir, "triggers.yaml")
	if err := os.WriteFile(tokFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("triggers:\n  - name: alert\n    kind: generic\n    channel: slack/"+general+
		"\n    secret_file: "+tokFile+"\n    per_hour: 3\n    prompt: \"Alert: {{.summary}}\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+testcli.Bin(t), "CLAUDEOPS_WORKDIR="+work,
		"SLACK_API_URL="+fs.URL+"/api/", "SLACK_BOT_TOKEN="+fs.Opts.BotToken, "SLACK_APP_TOKEN="+fs.Opts.AppToken,
		"CLAUDEOPS_ALLOWED_USERS=U0ALICE001", "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0", "CLAUDEOPS_TRIGGERS_FILE="+file,
	)
	env = append(env, testrunner.Env(t, home)...)
	b := startSlackBot(t, env)
	addr := httpAddr(t, b.stderr.String)
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect; its log:\n%s", b.stderr.String())
	}
	req, err := http.NewRequest("POST", "http://"+addr+"/triggers/alert", strings.NewReader(`{"summary":"<@U123> <!channel> disk full"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d, want 202", resp.StatusCode)
	}
	var root fakeslack.Message
	if !fs.WaitFor(90*time.Second, func() bool {
		for _, m := range fs.Messages(general) {
			if strings.Contains(m.VisibleText(), "noted") || len(fs.Thread(general, m.TS)) > 1 {
				root = m
				for _, r := range fs.Thread(general, m.TS) {
					if strings.Contains(r.VisibleText(), "noted") {
						return true
					}
				}
			}
		}
		return false
	}) {
		t.Fatalf("no thread with the run's reply; #general:\n%v\nlog:\n%s", fs.Messages(general), b.stderr.String())
	}
	if v := root.VisibleText(); !strings.Contains(v, "alert") || !strings.Contains(v, "U123") || !strings.Contains(v, "disk full") {
		t.Errorf("the thread's first message %q: want the trigger's name and the event's data", v)
	}
	for _, m := range append(fs.Messages(general), fs.Thread(general, root.TS)...) {
		if live := m.LiveMentions(); len(live) > 0 {
			t.Errorf("a live mention %q in %q", live, m.VisibleText())
		}
	}
}
