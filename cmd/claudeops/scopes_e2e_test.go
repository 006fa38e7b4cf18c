package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestSettingsCommandsBuilt: the settings commands in the built bot, with a
// settings file. `settings` explains each value (the file's with its line
// and label, the configuration's with its variable, chat's with who); a
// setting the file gives cannot be set from chat (the reply names the
// line); what chat set survives a restart of the process (stored, loaded
// at start); a reload of the file changes what `settings` says without a
// restart.
func TestSettingsCommandsBuilt(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.yaml")
	if err := os.WriteFile(file, []byte(goodSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"CLAUDEOPS_STATE_DIR=" + filepath.Join(dir, "state"), "CLAUDEOPS_CLAUDE_BIN=" + versionOnlyCLI(t, dir, "2.1.330"),
		"CLAUDEOPS_RUNNER=local", "CLAUDEOPS_SETTINGS_FILE=" + file}
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
