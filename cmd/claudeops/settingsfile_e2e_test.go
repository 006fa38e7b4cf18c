package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testkit"
)

// End to end through the built bot: the settings file (CLAUDEOPS_SETTINGS_FILE)
// refused whole at start, and while running kept at its last good content
// whatever is written over it. The oracles of which settings run: the
// file's SHA-256 the test computes itself, against what /readyz says is in
// use, and what `settings` answers in the console (the value and the line
// it comes from).

// goodSettings is a settings file with something at every level.
const goodSettings = `bot:
  model: sonnet
platforms:
  console: { reply: thread }
channels:
  console/console:
    label: the console
    model: opus
    budget: { thread: 2 }
`

// badSettings are settings files each with one problem, and what /readyz
// and the log must say of it (each different: the test knows which file
// was read).
var badSettings = []struct {
	name, content, want string
}{
	{"a bad value", "bot:\n  model: sonnet\n  mode: yolo\n", `line 3: mode: one of default, acceptEdits, plan, got "yolo"`},
	{"an unknown key", "bot:\n  model: sonnet\n  colour: blue\n", `line 3: unknown setting "colour" at bot`},
	{"an unknown scope", "bot:\n  model: sonnet\nchannels:\n  payments:\n    model: opus\n", `line 4: channel "payments": a channel id with its platform`},
	{"a duplicate", "bot:\n  model: sonnet\n  model: opus\n", `line 3: bot: "model" given twice (first at line 2)`},
	{"not YAML", "bot: [model: sonnet\n", `line 1: yaml: line 1: did not find expected ',' or ']'`},
	{"an unknown budget", "channels:\n  console/console:\n    budget: { week: 3 }\n", `line 3: unknown budget "week"`},
}

func sha(content string) string {
	s := sha256.Sum256([]byte(content))
	return hex.EncodeToString(s[:])
}

// TestSettingsFileAtStart: a settings file with problems stops the start
// as any misconfiguration does: exit 78, every problem on its own line
// with its line in the file, nothing started (no state directory).
func TestSettingsFileAtStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.yaml")
	content := "bot:\n  model: sonnet\n  mode: yolo\n  colour: blue\n  model: opus\nchannels:\n  payments: { model: opus }\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_CLAUDE_BIN=" + versionOnlyCLI(t, dir, "2.1.330")}
	for _, tc := range []struct {
		name string
		env  string
		want []string
	}{
		{"every problem", file, []string{
			"CLAUDEOPS_SETTINGS_FILE=" + file + `: line 3: mode: one of default, acceptEdits, plan, got "yolo"`,
			"CLAUDEOPS_SETTINGS_FILE=" + file + `: line 4: unknown setting "colour" at bot`,
			"CLAUDEOPS_SETTINGS_FILE=" + file + `: line 5: bot: "model" given twice (first at line 2)`,
			"CLAUDEOPS_SETTINGS_FILE=" + file + `: line 7: channel "payments": a channel id with its platform`,
		}},
		{"no such file", filepath.Join(dir, "nowhere.yaml"), []string{
			"CLAUDEOPS_SETTINGS_FILE=" + filepath.Join(dir, "nowhere.yaml") + ": read the settings file: open " + filepath.Join(dir, "nowhere.yaml") + ": no such file or directory",
		}},
		{"a directory", dir, []string{"CLAUDEOPS_SETTINGS_FILE=" + dir + ": read the settings file " + dir + ": a regular file of at most"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runOnce(t, os.Args[0], append(base, "CLAUDEOPS_SETTINGS_FILE="+tc.env), nil)
			lines, n := reportedProblems(stderr)
			if code != 78 || n != len(tc.want) || len(lines) != len(tc.want) {
				t.Fatalf("exit %d, %d problems (%d lines), want 78 and %d; stderr:\n%s", code, n, len(lines), len(tc.want), stderr)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("problem %d: %q, want it to start %q", i+1, lines[i], w)
				}
			}
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("the state directory after a refused start: %v, want none", err)
			}
		})
	}
}

// noSessionEnv is the environment of a bot that runs no session (its CLI
// answers --version only) with, unless content is "", a settings file
// holding content at file.
func noSessionEnv(t *testing.T, content string) (env []string, file string) {
	t.Helper()
	dir := t.TempDir()
	env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"CLAUDEOPS_STATE_DIR=" + filepath.Join(dir, "state"), "CLAUDEOPS_CLAUDE_BIN=" + versionOnlyCLI(t, dir, "2.1.330"),
		"CLAUDEOPS_RUNNER=local"}
	if content == "" {
		return env, ""
	}
	file = filepath.Join(dir, "settings.yaml")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return append(env, "CLAUDEOPS_SETTINGS_FILE="+file), file
}

// settingsBot is a console bot with a settings file and its endpoints.
type settingsBot struct {
	*botProc
	ops  *opsView
	file string
}

func startSettingsBot(t *testing.T, content string) *settingsBot {
	t.Helper()
	env, file := noSessionEnv(t, content)
	b := startBotProc(t, append(env, "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0"))
	return &settingsBot{botProc: b, ops: newOpsView(t, func() string { return strings.Join(b.logLines(), "\n") }), file: file}
}

// inUse waits until /readyz says content is in use and refused holds of
// what it says was refused; the bot stays ready throughout.
func (s *settingsBot) inUse(what, content string, refused func(string) bool) {
	s.t.Helper()
	s.ops.waitReady(what, func(d readyDoc) bool {
		if !*d.Ready {
			s.t.Fatalf("not ready (%s): %s", what, reasons(d))
		}
		return d.SettingsFile != nil && d.SettingsFile.InUse == sha(content) && refused(d.SettingsFile.Refused)
	})
}

// shows asks `settings` (the console's operator is a bot admin) and
// waits for its model line to say model, and then, when problem is set,
// for the line told to the operator alone saying the file on disk is
// refused, with problem.
func (s *settingsBot) shows(model, problem string) {
	s.t.Helper()
	s.say("settings")
	s.expect(`^\[main\] \* • model: ` + regexp.QuoteMeta(model) + `$`)
	if problem != "" {
		s.expect(`^\[main\] \* \(to operator\) The settings file on disk is not in use \(the last good one is\): .*` + regexp.QuoteMeta(problem))
	}
}

// countLog is how many log lines match re.
func (s *settingsBot) countLog(re string) int {
	n := 0
	for _, l := range s.logLines() {
		if regexp.MustCompile(re).MatchString(l) {
			n++
		}
	}
	return n
}

// writeAtomic puts content in place as an editor or a deployment does:
// written beside, renamed over.
func writeAtomic(t *testing.T, file, content string) {
	t.Helper()
	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

func none(s string) bool { return s == "" }

// TestSettingsFileReload: while the bot runs, each bad file written over
// the good one (atomically, or in place and half-written) is refused —
// /readyz keeps the good one in use, says why with the line, the log says
// it, the bot stays ready; a good one after is applied without a restart;
// SIGHUP reads the file again and does not stop the bot.
func TestSettingsFileReload(t *testing.T) {
	s := startSettingsBot(t, goodSettings)
	s.inUse("the file of the start", goodSettings, none)
	s.shows("`opus` — channel console/console (the console), from the settings file, line 8", "")
	for _, bad := range badSettings {
		writeAtomic(t, s.file, bad.content)
		s.inUse(bad.name+" refused", goodSettings, func(r string) bool { return strings.Contains(r, bad.want) })
		s.shows("`opus` — channel console/console (the console), from the settings file, line 8", bad.want)
	}
	if s.countLog(`settings file refused; the last good settings stay`) < len(badSettings) {
		t.Errorf("the log says fewer refusals than %d; log:\n%s", len(badSettings), strings.Join(s.logLines(), "\n"))
	}

	next := strings.Replace(goodSettings, "model: opus", "model: haiku", 1)
	writeAtomic(t, s.file, next)
	s.inUse("a good file after the bad ones", next, none)
	s.shows("`haiku` — channel console/console (the console), from the settings file, line 8", "")

	// Half-written in place: the first part (an unclosed mapping) is read
	// and refused, the whole applied once written.
	half := "channels:\n  console/console: { model: opus, bud"
	whole := half + "get: { thread: 3 } }\n"
	f, err := os.OpenFile(s.file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(half); err != nil {
		t.Fatal(err)
	}
	s.inUse("a half-written file refused", next, func(r string) bool { return strings.Contains(r, "did not find expected ',' or '}'") })
	s.shows("`haiku` — channel console/console (the console), from the settings file, line 8", "did not find expected ',' or '}'")
	if _, err := f.WriteString(whole[len(half):]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s.inUse("the file once whole", whole, none)
	s.shows("`opus` — channel console/console, from the settings file, line 2", "")

	// SIGHUP: read again (the same content: nothing changes), the bot runs on.
	reads := s.countLog(`msg="settings file read"`)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s.waitLog("SIGHUP: reading the settings file again")
	testkit.WaitForf(t, testkit.Long, func() bool { return s.countLog(`msg="settings file read"`) > reads },
		func() string { return "no read after SIGHUP; log:\n" + strings.Join(s.logLines(), "\n") })
	s.inUse("the same file after SIGHUP", whole, none)
	if err := s.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}
}

// TestSIGHUPWithoutSettingsFile: without a settings file a SIGHUP is said
// and ignored: the bot runs on and ends as it would.
func TestSIGHUPWithoutSettingsFile(t *testing.T) {
	env, _ := noSessionEnv(t, "")
	b := startBotProc(t, append(env, "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0"))
	o := newOpsView(t, func() string { return strings.Join(b.logLines(), "\n") })
	if d := o.waitReady("ready", func(d readyDoc) bool { return *d.Ready }); d.SettingsFile != nil {
		t.Errorf("/readyz shows a settings file without one: %+v", *d.SettingsFile)
	}
	if err := b.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	b.waitLog("SIGHUP: no settings file")
	o.waitReady("ready after SIGHUP", func(d readyDoc) bool { return *d.Ready })
	if err := b.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit after SIGHUP: %v", err)
	}
}

// TestSettingsKeepByIDOnSlack: the settings file names a Slack channel by
// its id; renamed, then archived and brought back, the channel keeps its
// settings (`settings` in a new thread shows the file's value and line
// each time), and a new channel given its old name gets none of them:
// nothing keys a setting by a channel's name.
func TestSettingsKeepByIDOnSlack(t *testing.T) {
	fs := fakeslack.Start(t, fakeslack.Options{Strict: true})
	const general, alice, mention = "C0GENERAL1", "U0ALICE001", "<@U0FAKEBOT1> "
	env, _ := noSessionEnv(t, "channels:\n  slack/"+general+":\n    label: \"#general\"\n    model: opus\n")
	b := startSlackBot(t, append(env, "CLAUDEOPS_ALLOWED_USERS="+alice,
		"SLACK_API_URL="+fs.URL+"/api/", "SLACK_BOT_TOKEN="+fs.Opts.BotToken, "SLACK_APP_TOKEN="+fs.Opts.AppToken))
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect; its log:\n%s", b.stderr.String())
	}
	// settingsLine is the model line `settings` answers in a new thread of
	// channel.
	settingsLine := func(channel string) string {
		t.Helper()
		root := fs.Post(alice, channel, mention+"settings")
		var line string
		if !fs.WaitFor(90*time.Second, func() bool {
			for _, m := range fs.Thread(channel, root) {
				for l := range strings.SplitSeq(m.VisibleText(), "\n") {
					if m.BotID != "" && strings.HasPrefix(l, "• model: ") {
						line = l
					}
				}
			}
			return line != ""
		}) {
			t.Fatalf("settings did not answer in %s; thread %+v; the bot's log:\n%s", channel, fs.Thread(channel, root), b.stderr.String())
		}
		return line
	}
	want := "• model: `opus` — channel slack/" + general + " (#general), from the settings file, line 4"
	if got := settingsLine(general); got != want {
		t.Errorf("at first: %q, want %q", got, want)
	}
	fs.AddChannel(fakeslack.Channel{ID: general, Name: "payments-renamed", Members: []string{alice, "U0BOB00001"}})
	if got := settingsLine(general); got != want {
		t.Errorf("renamed: %q, want %q", got, want)
	}
	// Another channel now called general gets none of them.
	fs.AddChannel(fakeslack.Channel{ID: "C0NEWGEN01", Name: "general", Members: []string{alice}})
	if got := settingsLine("C0NEWGEN01"); got != "• model: none (default)" {
		t.Errorf("a new channel with the old name: %q, want the default", got)
	}
	fs.ArchiveChannel(general, true)
	fs.ArchiveChannel(general, false)
	if got := settingsLine(general); got != want {
		t.Errorf("archived and brought back: %q, want %q", got, want)
	}
	b.stop(t)
}

// TestSettingsFilePartsCheck: what only the bot's parts can tell is wrong
// in a file — an image where the runner has none, an MCP server the
// servers file does not list — refuses the start too (exit 78, each with
// its line), as the same values set from chat are refused.
func TestSettingsFilePartsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.yaml")
	content := "bot:\n  model: sonnet\nchannels:\n  console/console:\n    image: evil/runner:latest\n    mcp: [nosuch]\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"CLAUDEOPS_STATE_DIR=" + filepath.Join(dir, "state"), "CLAUDEOPS_CLAUDE_BIN=" + versionOnlyCLI(t, dir, "2.1.330"),
		"CLAUDEOPS_RUNNER=local", "CLAUDEOPS_SETTINGS_FILE=" + file}
	code, _, stderr := runOnce(t, os.Args[0], env, nil)
	if code != 78 {
		t.Fatalf("exit %d, want 78; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"line 5: ", "line 6: "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not name %q:\n%s", want, stderr)
		}
	}
}
