package bot

import (
	"regexp"
	"strings"
	"testing"
)

// TestNearCommand: which one-word messages are taken for a typo of a
// command (asked about, never sent to Claude), and which go to Claude:
// real one-word prompts far from every command, and words near a command
// the sender may not run.
func TestNearCommand(t *testing.T) {
	table := commandTable((&testConfig{}).bot(nil).Extensions)
	tests := []struct {
		word       string
		notStarter bool // the sender may not change the thread
		want       string
	}{
		// Typos: swapped, missed, doubled, added letters, a neighbouring key.
		{word: "stauts", want: "status"},
		{word: "Stauts", want: "status"},
		{word: "staus", want: "status"},
		{word: "statuss", want: "status"},
		{word: "status?", want: "status"},
		{word: "sattus", want: "status"}, // a swap
		{word: "tsatus", want: "status"}, // the first two swapped
		{word: "hepl", want: "help"},
		{word: "hlep", want: "help"},
		{word: "stpo", want: "stop"},
		{word: "nwe", want: "new"},
		{word: "mdoe", want: "mode"},
		{word: "mide", want: "mode"},           // i beside o
		{word: "modle", want: "mode or model"}, // both one slip away
		{word: "cots", want: "cost"},
		{word: "cdw", want: "cwd"},
		{word: "rpeo", want: "repo"},
		{word: "dfif", want: "diff"},
		{word: "comit", want: "commit"},
		{word: "commti", want: "commit"},
		{word: "psuh", want: "push"},
		{word: "mpc", want: "mcp"},
		{word: "rulse", want: "rules"},
		{word: "shcedule", want: "schedule"},
		{word: "shcedlue", want: "schedule"}, // two slips in a long word
		{word: "setings", want: "settings"},
		{word: "setting", want: "settings"},
		{word: "unste", want: "unset"},
		// A real word one slip from a command that people send alone goes
		// to Claude: "more" after an answer.
		{word: "more"}, {word: "More"}, {word: "news"}, {word: "costs"}, {word: "sent"},
		// Other real words one slip away are asked about (`\coat` sends it).
		{word: "coat", want: "cost"},
		// Only what the sender may run: stop and new are the starter's.
		{word: "stpo", notStarter: true, want: ""},
		{word: "nwe", notStarter: true, want: ""},
		{word: "stauts", notStarter: true, want: "status"},
		// Prompts: far from every command, or not one word.
		{word: "hello"}, {word: "thanks"}, {word: "yes"}, {word: "no"}, {word: "ok"},
		{word: "hi"}, {word: "why"}, {word: "continue"}, {word: "proceed"}, {word: "go"},
		{word: "done"}, {word: "fix"}, {word: "sure"}, {word: "please"}, {word: "again"},
		{word: "retry"}, {word: "explain"}, {word: "summarize"}, {word: "deploy"}, {word: "lgtm"},
		{word: "hey"}, {word: "now"}, {word: "few"}, {word: "test"}, {word: "tests"},
		{word: "code"}, {word: "most"}, {word: "post"}, {word: "redo"}, {word: "made"},
		{word: "move"}, {word: "top"}, {word: "stats?!"}, {word: "pushed"}, {word: "committed"},
		{word: "👍"}, {word: "status of"}, {word: "thank you"}, {word: strings.Repeat("s", 30)},
		// A command itself is a command, not a typo.
		{word: "status"}, {word: "schedule"},
	}
	for _, tt := range tests {
		if got := strings.Join(nearCommand(table, tt.word, !tt.notStarter), " or "); got != tt.want {
			t.Errorf("nearCommand(%q, may change %v) = %q, want %q", tt.word, !tt.notStarter, got, tt.want)
		}
	}
}

// TestTypoIsNotAPrompt: at the console, with the real CLI and the fake
// model API, a typo of a command is asked about and no turn is spent (the
// API's request log is the oracle); a backslash sends it, or a command
// word, to Claude; one-word prompts far from any command go to Claude.
func TestTypoIsNotAPrompt(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	for _, typo := range []string{"stauts", "hepl", "stpo"} {
		h.say(typo)
		h.expect(regexp.QuoteMeta("[main] * Did you mean `") + `\w+` + regexp.QuoteMeta("`? Nothing was sent to Claude. To send “"+typo+"” to Claude as it is, begin with a backslash: `\\"+typo+"`."))
	}
	if n := len(h.api.Requests()); n != 0 {
		t.Fatalf("typos reached the model API: %d requests", n)
	}
	for _, prompt := range []string{"hello", "thanks", "yes", `\stauts`, `\status`} {
		h.say(prompt)
		h.expect(`^\[main\] claude: ok: ` + regexp.QuoteMeta(strings.TrimPrefix(prompt, `\`)) + `$`)
		h.expect(`— ✓`)
	}
	// Someone who may not stop the thread: "stpo" is no typo of theirs.
	h.say("/as bob stpo")
	h.expect(`^\[main\] claude: ok: stpo$`)
	h.expect(`— ✓`)
	// A backslash that starts other text is the prompt's own.
	h.say(`\d+ matches digits`)
	h.expect(`^\[main\] claude: ok: \\d\+ matches digits$`)
}
