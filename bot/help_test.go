package bot

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/internal/testkit"
)

// TestHelpGolden: `help` as each kind of person sees it, at the console
// and on a platform without commands of its own. Derived from the tables
// that parse (the command table, `schedule add`'s options, the console's
// own lines): a command or option added changes it here.
func TestHelpGolden(t *testing.T) {
	table := commandTable((&testConfig{}).bot(nil).Extensions)
	consoleOwn := console.New(console.Options{}).Commands()
	tests := []struct {
		file  string
		own   []adapters.Command
		admin bool
	}{
		{"console-operator.txt", consoleOwn, true},
		{"console-user.txt", consoleOwn, false},
		{"chat-admin.txt", nil, true},
		{"chat-user.txt", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			testkit.Golden(t, filepath.Join("testdata", "help", tt.file), helpText(table, tt.own, tt.admin)+"\n")
		})
	}
}

// TestHelpComplete: every command of the table says what it does and is
// in help with each of its usages (an admins' command as its bare name to
// others), and so is each line the platform takes itself.
func TestHelpComplete(t *testing.T) {
	table := commandTable((&testConfig{}).bot(nil).Extensions)
	own := console.New(console.Options{}).Commands()
	if len(own) == 0 {
		t.Fatal("the console lists no commands of its own: where is /thread?")
	}
	for _, admin := range []bool{true, false} {
		help := helpText(table, own, admin)
		for _, c := range table {
			if strings.TrimSpace(c.Help) == "" {
				t.Errorf("%s: no help", c.Name)
			}
			usages := c.Usage
			if !admin && (c.Who == thread.Admins || c.Who == thread.BotAdmins) {
				usages = []string{c.Name}
			}
			for _, u := range usages {
				if !strings.Contains(help, "`"+u+"`") {
					t.Errorf("help (admin %v) lacks %q", admin, u)
				}
			}
		}
		for _, c := range own {
			if c.Help == "" || !strings.Contains(help, "`"+c.Usage+"` — "+c.Help) {
				t.Errorf("help (admin %v) lacks the platform's %q", admin, c.Usage)
			}
		}
	}
}

// TestConsoleHelpIsComplete: `help` typed at the console lists `/thread`
// and `schedule add`'s options, each with what it does.
func TestConsoleHelpIsComplete(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	h.say("help")
	h.expect(regexp.QuoteMeta(`• `+"`"+`schedule add "<cron spec>" [--park] [--queue] [--push] [--pr] [--timeout <duration>] [--catch-up <duration>] <prompt>`+"`") +
		`.*` + regexp.QuoteMeta("`--catch-up <duration>` after downtime"))
	h.expect(regexp.QuoteMeta("• `/thread [<name>]` — at the console: show the current thread"))
}
