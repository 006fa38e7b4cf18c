package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Channels as scopes, end to end: the built bot with its settings file,
// the real CLI, the fake model API, and the fake Slack or a real Dendrite.
// The oracles are outside the bot: the requests the model API was sent
// (their model and system prompt), and what the platform shows.

// answerOK answers every prompt with a short text.
func answerOK(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
	return fakeanthropic.TextReply("ok")
}

// noRequestFor fails when a model request carries marker.
func noRequestFor(t *testing.T, api *fakeanthropic.Server, marker string) {
	t.Helper()
	for _, r := range api.Requests() {
		if strings.Contains(r.Transcript(), marker) {
			t.Errorf("a model request carries %q: %s", marker, r.LastUserText())
		}
	}
}

// systemHas reports whether the request's system prompt has s.
func systemHas(r *fakeanthropic.Request, s string) bool {
	return slices.ContainsFunc(r.System, func(b string) bool { return strings.Contains(b, s) })
}

func writeSettings(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

const paymentsSettings = `# the payments team's settings
channels:
  slack/C0PAYMENTS1:
    label: "#payments"
    instructions: "PAYMENTS-MARK: always run the linter before committing"
    model: claude-payments-1
    users: [U0ALICE001]
  slack/C0LEDGER01:
    label: "#ledger"
    budget: { thread: 0.00001 }
`

// TestSettingsSlack: a channel's instructions, memory, model and users
// apply in that channel only; `settings` explains each value; a changed
// file changes the running bot and a bad one does not.
func TestSettingsSlack(t *testing.T) {
	const payments, general = "C0PAYMENTS1", "C0GENERAL1"
	const alice, bob = "U0ALICE001", "U0BOB00001"
	bin := testcli.Bin(t)
	fs := fakeslack.Start(t, fakeslack.Options{Strict: true})
	api := fakeanthropic.Start(t, answerOK)
	home, work, state := t.TempDir(), t.TempDir(), t.TempDir()
	file := filepath.Join(t.TempDir(), "settings.yaml")
	writeSettings(t, file, paymentsSettings)
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"SLACK_API_URL="+fs.URL+"/api/", "SLACK_BOT_TOKEN="+fs.Opts.BotToken, "SLACK_APP_TOKEN="+fs.Opts.AppToken,
		"CLAUDEOPS_ALLOWED_USERS="+alice+","+bob, "CLAUDEOPS_SETTINGS_FILE="+file,
	)
	env = append(env, testrunner.Env(t, home)...)
	b := startSlackBot(t, env)
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect; its log:\n%s", b.stderr.String())
	}
	log := b.stderr.String
	said := func(channel, root, want string) {
		t.Helper()
		if !fs.WaitFor(90*time.Second, func() bool {
			return slices.ContainsFunc(fs.Thread(channel, root), func(m fakeslack.Message) bool {
				return m.User == fs.Opts.BotUserID && strings.Contains(m.VisibleText(), want)
			})
		}) {
			t.Fatalf("the bot did not say %q: %+v; its log:\n%s", want, fs.Thread(channel, root), log())
		}
	}

	// The channel's model and instructions, there and not elsewhere.
	pay := fs.Post(alice, payments, "<@U0FAKEBOT1> first in payments")
	r := requestFor(t, api, "first in payments", log)
	if r.Model != "claude-payments-1" || !systemHas(r, "PAYMENTS-MARK") {
		t.Errorf("in #payments: model %q, instructions there %v; want claude-payments-1 and the mark", r.Model, systemHas(r, "PAYMENTS-MARK"))
	}
	gen := fs.Post(alice, general, "<@U0FAKEBOT1> first in general")
	r = requestFor(t, api, "first in general", log)
	if r.Model == "claude-payments-1" || systemHas(r, "PAYMENTS-MARK") {
		t.Errorf("in #general: model %q, the payments instructions there %v", r.Model, systemHas(r, "PAYMENTS-MARK"))
	}
	said(general, gen, "ok")

	// The channel's users: Bob may use the bot, but not in #payments.
	fs.Post(bob, payments, "<@U0FAKEBOT1> bob in payments")
	bobGen := fs.Post(bob, general, "<@U0FAKEBOT1> bob in general")
	requestFor(t, api, "bob in general", log)
	said(general, bobGen, "ok")
	if !fs.WaitFor(90*time.Second, func() bool {
		return slices.ContainsFunc(fs.Ephemerals(payments, bob), func(m fakeslack.Message) bool {
			return strings.Contains(m.VisibleText(), "not allowed")
		})
	}) {
		t.Errorf("Bob was not told he may not use the bot in #payments: %+v", fs.Ephemerals(payments, bob))
	}
	noRequestFor(t, api, "bob in payments")

	// settings explains where each value comes from.
	said(payments, pay, "ok")
	fs.Reply(alice, payments, pay, "<@U0FAKEBOT1> settings")
	said(payments, pay, "claude-payments-1` — channel slack/C0PAYMENTS1 (#payments), from the settings file, line 6")
	said(payments, pay, "— channel slack/C0PAYMENTS1 (#payments), from the settings file, line 7")

	// Memory: a fact remembered in #payments reaches its next session, and
	// no session of #general.
	fs.Reply(alice, payments, pay, "<@U0FAKEBOT1> remember FACT-MARK the ledger service is frozen on Fridays")
	said(payments, pay, "FACT-MARK")
	fs.Post(alice, payments, "<@U0FAKEBOT1> second in payments")
	if r = requestFor(t, api, "second in payments", log); !systemHas(r, "FACT-MARK") || !systemHas(r, "PAYMENTS-MARK") {
		t.Errorf("the next session of #payments was not given its fact and instructions: %q", r.System)
	}
	fs.Post(alice, general, "<@U0FAKEBOT1> second in general")
	if r = requestFor(t, api, "second in general", log); systemHas(r, "FACT-MARK") {
		t.Error("a session of #general was given #payments' fact")
	}

	// The channel's budget: a thread of #ledger stops at it, and its next
	// message is refused before it reaches Claude; #general goes on.
	const ledger = "C0LEDGER01"
	led := fs.Post(alice, ledger, "<@U0FAKEBOT1> first in ledger")
	said(ledger, led, "this thread's budget is spent")
	fs.Reply(alice, ledger, led, "<@U0FAKEBOT1> second in ledger")
	said(ledger, led, "Not sent to Claude: this thread's budget is spent")
	said(ledger, led, "(channel slack/C0LEDGER01 (#ledger), from the settings file, line 10)")
	noRequestFor(t, api, "second in ledger")
	fs.Reply(alice, general, gen, "<@U0FAKEBOT1> again in general")
	requestFor(t, api, "again in general", log)
	said(general, gen, "ok")

	// A changed file changes the running bot (SIGHUP: at once).
	writeSettings(t, file, strings.Replace(paymentsSettings, "claude-payments-1", "claude-payments-2", 1))
	if err := b.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForf(t, 90*time.Second, func() bool { return strings.Contains(log(), "settings file read") }, log)
	fs.Post(alice, payments, "<@U0FAKEBOT1> third in payments")
	if r = requestFor(t, api, "third in payments", log); r.Model != "claude-payments-2" {
		t.Errorf("after the reload, #payments' model is %q, want claude-payments-2", r.Model)
	}

	// A bad file changes nothing: an unknown key, and a bad value.
	writeSettings(t, file, strings.Replace(paymentsSettings, "model: claude-payments-1", "model: claude-payments-3\n    colour: red", 1))
	if err := b.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForf(t, 90*time.Second, func() bool { return strings.Contains(log(), `unknown setting \"colour\"`) }, log)
	fs.Post(alice, payments, "<@U0FAKEBOT1> fourth in payments")
	if r = requestFor(t, api, "fourth in payments", log); r.Model != "claude-payments-2" {
		t.Errorf("after a bad file, #payments' model is %q, want the last good claude-payments-2", r.Model)
	}
	b.stop(t)
	for _, v := range fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}

// TestSettingsMatrix: the same on a real Dendrite: a room's instructions,
// memory, model and users apply in that room only, from a settings file
// naming it, read again on SIGHUP once the rooms exist.
func TestSettingsMatrix(t *testing.T) {
	bin := testcli.Bin(t)
	srv := dendrite.Start(t)
	botUser := srv.Register(t, "claude")
	alice := srv.Client(t, srv.Register(t, "alice"), dendrite.ClientOptions{})
	bob := srv.Client(t, srv.Register(t, "bob"), dendrite.ClientOptions{})
	api := fakeanthropic.Start(t, answerOK)
	home, state, work := t.TempDir(), t.TempDir(), t.TempDir()
	file := filepath.Join(t.TempDir(), "settings.yaml")
	writeSettings(t, file, "bot: {memory: anyone}\n")
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"CLAUDEOPS_ALLOWED_USERS="+alice.User.ID.String()+","+bob.User.ID.String(), "CLAUDEOPS_SETTINGS_FILE="+file,
		"MATRIX_HOMESERVER="+srv.URL, "MATRIX_USER_ID="+botUser.ID.String(), "MATRIX_PASSWORD="+botUser.Password,
		"CLAUDEOPS_TEST_RUN_MAIN=1",
	)
	env = append(env, testrunner.Env(t, home)...)
	r := &matrixEnvRun{t: t, srv: srv, bot: botUser, alice: alice, state: state,
		db: filepath.Join(state, "claudeops.db"), recoveryKey: filepath.Join(state, "claudeops.matrix-recovery-key"), env: env}
	cmd := r.start()
	room := func(name string) id.RoomID {
		rm := alice.CreateRoom(dendrite.RoomOptions{Name: name, Invite: []id.UserID{botUser.ID, bob.User.ID}})
		bob.Join(rm)
		if !alice.WaitFor(90*time.Second, func() bool { return alice.Membership(rm, botUser.ID) == event.MembershipJoin }) {
			t.Fatal("the bot did not join " + name)
		}
		return rm
	}
	ops, lounge := room("ops"), room("lounge")
	writeSettings(t, file, "channels:\n  matrix/"+ops.String()+":\n    label: \"#ops\"\n    instructions: \"OPS-MARK: answer in bullet points\"\n    model: claude-ops-1\n    users: [\""+alice.User.ID.String()+"\"]\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	log := func() string { return "(the bot's log is in the test's output)" }
	said := func(c *dendrite.Client, rm id.RoomID, root id.EventID, want string) bool {
		return c.WaitFor(20*time.Second, func() bool {
			return slices.ContainsFunc(c.Thread(rm, root), func(m dendrite.Message) bool {
				return m.Sender == botUser.ID && strings.Contains(m.Body, want)
			})
		})
	}
	// The reload has happened once settings in the room says so.
	root := alice.SendText(ops, "settings", botUser.ID, "")
	for i := 0; !said(alice, ops, root, "claude-ops-1"); i++ {
		if i == 5 {
			t.Fatalf("settings in #ops never showed the file's model: %+v", alice.Thread(ops, root))
		}
		alice.SendText(ops, "settings", botUser.ID, root)
	}
	if !said(alice, ops, root, "from the settings file, line 5") {
		t.Errorf("settings did not say where the model comes from: %+v", alice.Thread(ops, root))
	}

	opsRoot := alice.SendText(ops, "first in ops", botUser.ID, "")
	rq := requestFor(t, api, "first in ops", log)
	if rq.Model != "claude-ops-1" || !systemHas(rq, "OPS-MARK") {
		t.Errorf("in #ops: model %q, instructions there %v", rq.Model, systemHas(rq, "OPS-MARK"))
	}
	alice.SendText(lounge, "first in lounge", botUser.ID, "")
	if rq = requestFor(t, api, "first in lounge", log); rq.Model == "claude-ops-1" || systemHas(rq, "OPS-MARK") {
		t.Errorf("in #lounge: model %q, #ops' instructions there %v", rq.Model, systemHas(rq, "OPS-MARK"))
	}

	// Bob may use the bot in #lounge, not in #ops.
	bob.SendText(ops, "bob in ops", botUser.ID, "")
	bob.SendText(lounge, "bob in lounge", botUser.ID, "")
	requestFor(t, api, "bob in lounge", log)
	noRequestFor(t, api, "bob in ops")

	// Memory: #ops' fact reaches its next session, not #lounge's.
	if !said(alice, ops, opsRoot, "ok") {
		t.Fatalf("no answer in #ops: %+v", alice.Thread(ops, opsRoot))
	}
	alice.SendText(ops, "remember FACT-MARK the pager rotates on Mondays", botUser.ID, opsRoot)
	if !said(alice, ops, opsRoot, "FACT-MARK") {
		t.Fatalf("remember was not confirmed: %+v", alice.Thread(ops, opsRoot))
	}
	alice.SendText(ops, "second in ops", botUser.ID, "")
	if rq = requestFor(t, api, "second in ops", log); !systemHas(rq, "FACT-MARK") {
		t.Errorf("the next session of #ops was not given its fact: %q", rq.System)
	}
	alice.SendText(lounge, "second in lounge", botUser.ID, "")
	if rq = requestFor(t, api, "second in lounge", log); systemHas(rq, "FACT-MARK") {
		t.Error("a session of #lounge was given #ops' fact")
	}
	noRequestFor(t, api, "bob in ops")
	r.stop(cmd)
}
