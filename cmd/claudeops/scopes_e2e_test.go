package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeslack"
)

// TestSettingsCommandsBuilt: the settings commands in the built bot, with a
// settings file. `settings` explains each value (the file's with its line
// and label, the configuration's with its variable, chat's with who); a
// setting the file gives cannot be set from chat (the reply names the
// line); what chat set survives a restart of the process (stored, loaded
// at start); a reload of the file changes what `settings` says without a
// restart.
func TestSettingsCommandsBuilt(t *testing.T) {
	env, file := noSessionEnv(t, goodSettings)
	q := regexp.QuoteMeta

	b := startBotProc(t, env)
	b.say("settings")
	b.expect(q("• model: `opus` — channel console/console (the console), from the settings file, line 8"))
	b.expect(q("• reply: `thread` — platform console, from the settings file, line 4"))
	b.say("set model haiku")
	b.expect(q("Nothing changed: model at channel console/console is managed by the settings file, line 8: change it there."))
	b.say("set effort high")
	b.expect(q("effort is `high` at channel console/console. Sessions started from now on use it."))
	if err := b.endInput(time.Minute); err != nil {
		t.Fatalf("the bot's exit: %v", err)
	}

	b = startBotProc(t, env)
	b.say("settings")
	b.expect(q("• model: `opus` — channel console/console (the console), from the settings file, line 8"))
	b.expect(`• effort: ` + q("`high` — channel console/console, set in chat by operator on "))
	writeAtomic(t, file, "bot:\n  model: sonnet\n")
	b.waitLog(`msg="settings file read"`)
	deadline := time.Now().Add(time.Minute)
	for {
		b.say("settings")
		m := b.expect(`• model: (.*)`)
		if m[1] == "`sonnet` — bot, from the settings file, line 2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the reload, model: %s", m[1])
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.say("set model haiku")
	b.expect(q("model is `haiku` at channel console/console. Sessions started from now on use it."))
}

// TestSettingsCommandsSlack: on a fake Slack, two channels with their own
// admins from a settings file. `settings` in A shows A's values and none
// of B's; someone who is no admin of A, and B's admin, are refused there
// privately (an ephemeral message) and change nothing; A's admin sets A's
// model, which B does not get, and instructions of two lines.
func TestSettingsCommandsSlack(t *testing.T) {
	const (
		chanA, chanB        = "C0AAAAAAA1", "C0BBBBBBB1"
		alice, bob, mallory = "U0ALICE001", "U0BOB00001", "U0MALLORY1"
		mention             = "<@U0FAKEBOT1> "
	)
	file := filepath.Join(t.TempDir(), "settings.yaml")
	content := "channels:\n  slack/" + chanA + ":\n    label: \"#a\"\n    admins: [" + alice + "]\n" +
		"  slack/" + chanB + ":\n    label: \"#b\"\n    admins: [" + bob + "]\n    instructions: SECRET-B\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startSlackTools(t, echoScript, "CLAUDEOPS_SETTINGS_FILE="+file, "CLAUDEOPS_ALLOWED_USERS="+alice+","+bob+","+mallory)
	said := func(channel, root, want string) string {
		t.Helper()
		var got string
		if !r.fs.WaitFor(90*time.Second, func() bool {
			for _, m := range r.fs.Thread(channel, root) {
				if m.User == r.fs.Opts.BotUserID && strings.Contains(m.VisibleText(), want) {
					got = m.VisibleText()
					return true
				}
			}
			return false
		}) {
			t.Fatalf("the thread never said %q: %+v; the bot's log:\n%s", want, r.fs.Thread(channel, root), r.bot.stderr.String())
		}
		return got
	}
	toldPrivately := func(channel, user, want string) {
		t.Helper()
		if !r.fs.WaitFor(90*time.Second, func() bool {
			return slices.ContainsFunc(r.fs.Ephemerals(channel, user), func(m fakeslack.Message) bool { return strings.Contains(m.VisibleText(), want) })
		}) {
			t.Fatalf("%s was not told %q privately: %+v; the bot's log:\n%s", user, want, r.fs.Ephemerals(channel, user), r.bot.stderr.String())
		}
	}

	rootA := r.fs.Post(mallory, chanA, mention+"settings")
	got := said(chanA, rootA, "admins: `"+alice+"` — channel slack/"+chanA+" (#a), from the settings file, line 4")
	for _, leak := range []string{"SECRET", chanB, "#b"} {
		if strings.Contains(got, leak) {
			t.Errorf("settings in A show %q:\n%s", leak, got)
		}
	}
	r.fs.Reply(mallory, chanA, rootA, mention+"set model opus")
	toldPrivately(chanA, mallory, "Nothing changed: only the channel's admins set its model.")
	r.fs.Reply(bob, chanA, rootA, mention+"set model opus")
	toldPrivately(chanA, bob, "Nothing changed: only the channel's admins set its model.")
	r.fs.Reply(alice, chanA, rootA, mention+"set model opus")
	said(chanA, rootA, "model is `opus` at channel slack/"+chanA+".")
	// Instructions take the rest of the message, lines and all.
	r.fs.Reply(alice, chanA, rootA, mention+"set instructions Always run make lint.\nNever touch migrations/.")
	said(chanA, rootA, "instructions is `Always run make lint.` (2 lines, 46 characters) at channel slack/"+chanA+".")

	rootB := r.fs.Post(bob, chanB, mention+"settings")
	got = said(chanB, rootB, "instructions: `SECRET-B`")
	if !strings.Contains(got, "model: none (default)") || strings.Contains(got, "opus") || strings.Contains(got, "lint") || strings.Contains(got, chanA) {
		t.Errorf("settings in B after A's model was set:\n%s", got)
	}
	r.fs.Reply(alice, chanB, rootB, mention+"set model haiku")
	toldPrivately(chanB, alice, "Nothing changed: only the channel's admins set its model.")
	r.bot.stop(t)
	for _, v := range r.fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}

// TestSettingsCommandsMatrix: on a real homeserver, a room's settings come
// from its server's workspace scope in the settings file (a Matrix room id
// names its server), `settings` says so with the line; a change of it from
// chat is refused with that line, and a user who administers nothing is
// refused a change of the room's or the server's.
func TestSettingsCommandsMatrix(t *testing.T) {
	r := startMatrixTools(t, echoScript, false)
	file := filepath.Join(t.TempDir(), "settings.yaml")
	content := "workspaces:\n  matrix/" + r.srv.ServerName + ":\n    model: opus\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	r.env = append(r.env, "CLAUDEOPS_SETTINGS_FILE="+file)
	cmd := r.start()
	room := r.room(false)
	root := r.alice.SendText(room, "settings", r.bot.ID, "")
	r.reply(room, root, "• model: `opus` — workspace matrix/"+r.srv.ServerName+", from the settings file, line 3")
	r.alice.SendText(room, "set --workspace model haiku", r.bot.ID, root)
	r.reply(room, root, "Nothing changed: model at workspace matrix/"+r.srv.ServerName+" is managed by the settings file, line 3: change it there.")
	r.alice.SendText(room, "set --workspace effort high", r.bot.ID, root)
	r.reply(room, root, "Nothing changed: only bot admins set effort at workspace matrix/"+r.srv.ServerName+".")
	r.alice.SendText(room, "set effort high", r.bot.ID, root)
	r.reply(room, root, "Nothing changed: only the channel's admins set its effort.")
	r.stop(cmd)
}
