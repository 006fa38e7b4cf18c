package bot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestConsoleCommands(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	sub := filepath.Join(h.workdir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}

	h.say("help")
	h.expect(`^\[main\] \* Commands \(a message that starts with any other word is a prompt for Claude\):$`)
	h.expect("• `rules \\| rules add <allow\\|deny> <Tool>\\[\\(<pattern>\\)\\] \\| rules rm <id>`")
	h.say("/as bob help")
	h.expect("• `cwd` — show, or \\(bot admins\\) set")

	h.say("status")
	h.expect(`State: no session yet`)
	// A message starting with a command word is a command; one that does
	// not parse gets the usage and never reaches Claude.
	h.say("status of the build?")
	h.expect("Usage: `status`\\. \\(Commands take the whole message; to ask Claude, begin with another word\\.\\)")
	h.say("what is the status of the build?")
	h.expect(`claude: ok: what is the status of the build\?`)
	for _, bad := range []string{"rules add", "rules add allow", "rules add maybe Bash", "rules rm", "rules list all", "mode plan now", "stop now"} {
		h.say(bad)
		h.expect("Usage: `")
	}

	h.say("mode plan")
	h.expect(`^\[main\] \* Mode: plan\.$`)
	h.say("mode bogus")
	h.expect(`Unknown mode bogus; use one of default, acceptEdits, plan\.`)
	h.say("model claude-sonnet-4-5")
	h.expect(`^\[main\] \* Model: claude-sonnet-4-5\.$`)
	h.say("which model")
	h.expect(`claude: ok: which model`)
	h.expect(`— ✓`)
	reqs := h.api.Requests()
	if m := reqs[len(reqs)-1].Model; m != "claude-sonnet-4-5" {
		t.Errorf("model after `model`: %s", m)
	}
	h.say("status")
	h.expect(`Model: claude-sonnet-4-5 · Mode: plan`)

	h.say("cost")
	h.expect(`^\[main\] \* This thread: \$0\.\d+ · 2 turns`)
	h.expect(`This channel today \(UTC\): \$0\.\d+ · 2 turns`)

	h.say("cwd")
	h.expect(`Working directory: ` + h.workdir)
	h.say("/as bob cwd sub")
	h.expect(`\(to bob\) Only admins can change the working directory\.`)
	h.say("cwd sub")
	h.expect(`Working directory of this channel: ` + sub + `\.`)
	h.say("cwd nowhere")
	h.expect(`Not a directory: `)

	h.say("rules add deny Bash(rm:*)")
	id := h.expect(`^\[main\] \* Rule (\d+): deny Bash\(rm:\*\) in this channel\.$`)[1]
	h.say("/as bob rules add allow Bash")
	h.expect(`\(to bob\) Only admins can change permission rules\.`)
	h.say("rules add allow Bash(")
	h.expect(`Not a rule: `)
	// A rule is the rest of the line, spaces included.
	h.say("rules add  DENY   Bash(git push --force:*)")
	h.expect(`Rule \d+: deny Bash\(git push --force:\*\) in this channel\.`)
	h.say("rules add allow Bash(git status:*)")
	h.expect(`Rule \d+: allow Bash\(git status:\*\) in this channel\.`)
	h.say("rules")
	h.expect(`^\[main\] \* ` + id + `\. deny Bash\(rm:\*\) \(channel\)$`)
	h.expect(`\. deny Bash\(git push --force:\*\) \(channel\)$`)
	h.expect(`\. allow Bash\(git status:\*\) \(channel\)$`)
	// The deny rule reaches the live session: the CLI refuses rm itself
	// (the bot's own rules are the first line; see TestTrustDenyRulesReachTheCLI).
	h.say("run rm -rf stuff")
	h.expect(`claude: tool result: .*[Pp]ermission`)
	h.say("rules rm " + id)
	h.expect(`Rule ` + id + ` removed\.`)
	h.say("rules rm 999")
	h.expect(`There is no rule 999 here`)

	h.say("new")
	h.expect(`Session ended\. Your next message starts a fresh conversation\.`)
	h.say("status")
	h.expect(`State: no session yet`)
	h.say("stop")
	h.expect(`Nothing is running\.`)

	th, ok, err := h.st.GetThread(context.Background(), "console/console/main")
	if err != nil || !ok || th.SessionID != "" || th.Mode != "plan" || th.Model != "claude-sonnet-4-5" {
		t.Errorf("thread after new: %+v %v %v", th, ok, err)
	}
}

// TestSentencesAreNotCommands: a prompt that begins with a word the
// table also has ("set up CI") goes to Claude; the command's own forms
// stay commands.
func TestSentencesAreNotCommands(t *testing.T) {
	table := commandTable((&testConfig{}).bot(nil).Extensions)
	for _, c := range []struct {
		text string
		want string // the command's name, "" for a prompt
	}{
		{"set up CI for the api repository", ""},
		{"Set the timeout to 30s in config.go", ""},
		{"settings for the linter are wrong, fix them", ""},
		{"unset the GOFLAGS variable in the Makefile", ""},
		{"forget the old API, use v2", ""},
		{"memory leak in the parser: find it", ""},
		{"review the diff before it merges", ""},
		{"review", "review"},
		{"set model opus", "set"},
		{"set --bot model opus", "set"},
		{"set Instructions always run make lint", "set"},
		{"set budget.thread 2", "set"},
		{"set slack/C0OTHER001 instructions leak", "set"},
		{"set budget.week 2", "set"},
		{"set", "set"},
		{"unset model", "unset"},
		{"settings", "settings"},
		{"memory", "memory"},
		{"memory dismiss", "memory"},
		{"forget 2", "forget"},
		{"forget", "forget"},
		{"remember the ledger is frozen on Fridays", "remember"},
		{"PR #12 broke the build, find out why", ""},
		{"pr 12 is ready, can you review it", ""},
		{"pr is the right word?", ""},
		{"pr", "pr"},
		{"pr --draft Update the README", "pr"},
		{"pr Update the README", "pr"},
	} {
		r, _ := findCommand(table, c.text)
		got := ""
		if r != nil {
			got = r.Name
		}
		if got != c.want {
			t.Errorf("%q: command %q, want %q", c.text, got, c.want)
		}
	}
}
