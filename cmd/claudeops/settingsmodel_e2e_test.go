package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestSettingsFileReachesTheModel: the real CLI on the console, the model
// the fake model API is sent as the oracle. The file's model for the
// console's channel starts each new thread's session; a bad file written
// over it (a good model beside an unknown key) changes nothing: the next
// new thread still gets the last good file's model; a good file after
// gives its model to the next new thread, without a restart.
func TestSettingsFileReachesTheModel(t *testing.T) {
	api := fakeanthropic.Start(t, fakeanthropic.ChatScript(nil))
	env, _ := consoleEnv(t, api)
	file := filepath.Join(t.TempDir(), "settings.yaml")
	first := "channels:\n  console/console:\n    model: claude-sonnet-4-5\n"
	if err := os.WriteFile(file, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBotProc(t, append(env, "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0", "CLAUDEOPS_SETTINGS_FILE="+file))
	s := &settingsBot{botProc: b, ops: newOpsView(t, func() string { return strings.Join(b.logLines(), "\n") }), file: file}
	s.inUse("the file of the start", first, none)

	// turn starts thread and says text there; it returns the models of the
	// model requests that carried text.
	turn := func(thread, text string) []string {
		t.Helper()
		s.say("/thread " + thread)
		s.expect(`^\[` + thread + `\] \* switched to thread ` + thread + `$`)
		s.say(text)
		s.expect(`^\[` + thread + `\] claude: ok: .*` + text + `$`)
		var models []string
		for _, r := range api.Requests() {
			if strings.Contains(r.LastUserText(), text) {
				models = append(models, r.Model)
			}
		}
		return models
	}
	want := func(what string, got []string, model string) {
		t.Helper()
		if len(got) == 0 {
			t.Fatalf("%s: no model request carried the message", what)
		}
		for _, m := range got {
			if m != model {
				t.Errorf("%s: the model API was sent %q, want %q (all: %q)", what, m, model, got)
			}
		}
	}
	want("the file of the start", turn("one", "hello one"), "claude-sonnet-4-5")

	bad := "channels:\n  console/console:\n    model: claude-haiku-4-5\n    colour: red\n"
	writeAtomic(t, file, bad)
	s.inUse("a bad file refused", first, func(r string) bool { return strings.Contains(r, `line 4: unknown setting "colour"`) })
	want("after a bad file", turn("two", "hello two"), "claude-sonnet-4-5")

	good := "channels:\n  console/console:\n    model: claude-haiku-4-5\n"
	writeAtomic(t, file, good)
	s.inUse("a good file after", good, none)
	want("after a good file", turn("three", "hello three"), "claude-haiku-4-5")
	if err := s.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}
}

// TestSettingsFileRefusedAtTerminal: with the console at a terminal (its
// log in a file), a refused settings file is said on the terminal too,
// once per bad content, with its problem and line.
func TestSettingsFileRefusedAtTerminal(t *testing.T) {
	env, file := noSessionEnv(t, goodSettings)
	o := oneTerminal(t)
	p := startConsoleTyped(t, env, nil, o.stdout, o.stderr)
	o.stdout.Close()
	o.stderr.Close()
	waitOutput(t, o.conv, "claudeops console:")
	const said = "claudeops: the settings file was refused; the last good settings stay: "
	for _, bad := range badSettings[:2] {
		writeAtomic(t, file, bad.content)
		waitOutput(t, o.conv, said+"settings file "+file+": "+bad.want)
	}
	time.Sleep(3 * settingsPoll / 2) // a look or two more at the last one
	p.finish(t)
	if n := strings.Count(o.conv(), said); n != 2 {
		t.Errorf("the terminal was told %d times of 2 bad contents, want once each:\n%s", n, o.conv())
	}
}
