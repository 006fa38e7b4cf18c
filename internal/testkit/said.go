package testkit

import (
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

// CheckSaid compares a thread read back (adapters.ThreadReader) with want,
// one "user: text" line a message, "bot user: text" for the bot's own.
func CheckSaid(t testing.TB, what string, got []adapters.Said, want []string) {
	t.Helper()
	var lines []string
	for _, m := range got {
		l := m.User.ID + ": " + m.Text
		if m.FromBot {
			l = "bot " + l
		}
		lines = append(lines, l)
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s read back:\n%s\nwant:\n%s", what, strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
