package bot

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/internal/mdtable"
)

// guideWho is what the user's guide says, in its "who" column, of a
// command of each Access.
var guideWho = map[thread.Access]string{
	thread.Anyone:    "anyone",
	thread.Starter:   "changes: the thread's starter and admins",
	thread.Admins:    "changes: admins",
	thread.Creator:   "changes: the schedule's creator and admins",
	thread.Author:    "changes: the fact's author and admins",
	thread.BotAdmins: "changes: bot admins",
}

// guideRow is one command as the user's guide documents it: its usages
// (the first column's code spans) and who may change with it.
type guideRow struct {
	usages []string
	who    string
}

func (r guideRow) String() string {
	return fmt.Sprintf("%q (%s)", r.usages, r.who)
}

// TestUserGuideCommands holds the command table of docs/USER_GUIDE.md to
// the bot's, the one that dispatches commands and makes help (commands.go
// and the extensions' rows, as cmd gives every bot them): the same
// commands in help's order, each with exactly help's usages and who may
// change with it. A command added, renamed or given another usage fails
// here until the guide says so.
func TestUserGuideCommands(t *testing.T) {
	doc, err := os.ReadFile("../docs/USER_GUIDE.md")
	if err != nil {
		t.Fatal(err)
	}
	got := guideCommands(t, string(doc))
	var want []guideRow
	for _, c := range commandTable((&testConfig{}).bot(nil).Extensions) {
		want = append(want, guideRow{usages: c.Usage, who: guideWho[c.Who]})
	}
	if diff := diffGuide(got, want); len(diff) > 0 {
		t.Errorf("docs/USER_GUIDE.md's command table is not the bot's (commands.go, and the extensions' Commands):\n%s", strings.Join(diff, "\n"))
	}
}

// diffGuide says how the guide's rows differ from the table's: commands
// missing or unknown, usages or access that differ, the order.
func diffGuide(got, want []guideRow) []string {
	name := func(r guideRow) string {
		if len(r.usages) == 0 {
			return ""
		}
		return strings.Fields(r.usages[0])[0]
	}
	index := func(rows []guideRow) map[string]guideRow {
		m := map[string]guideRow{}
		for _, r := range rows {
			m[name(r)] = r
		}
		return m
	}
	g, w := index(got), index(want)
	var out []string
	for _, r := range got {
		if _, ok := w[name(r)]; !ok {
			out = append(out, fmt.Sprintf("documents %v, which is no command", r))
		}
	}
	for _, r := range want {
		d, ok := g[name(r)]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("does not document %v", r))
		case !slices.Equal(d.usages, r.usages) || d.who != r.who:
			out = append(out, fmt.Sprintf("documents %v, want %v", d, r))
		}
	}
	names := func(rows []guideRow) []string {
		var s []string
		for _, r := range rows {
			s = append(s, name(r))
		}
		return s
	}
	if len(out) == 0 && !slices.Equal(names(got), names(want)) {
		out = append(out, fmt.Sprintf("order %q, want help's %q", names(got), names(want)))
	}
	return out
}

// codeSpan is a Markdown code span; within a table cell `\|` stands for |.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// guideCommands reads the rows of the table headed "| command | who |
// does |".
func guideCommands(t *testing.T, doc string) []guideRow {
	t.Helper()
	var rows []guideRow
	for _, cells := range mdtable.Rows(doc, "| command | who | does |") {
		if len(cells) < 3 {
			t.Fatalf("docs/USER_GUIDE.md: a command row without its three cells: %q", cells)
		}
		var r guideRow
		for _, m := range codeSpan.FindAllStringSubmatch(cells[0], -1) {
			r.usages = append(r.usages, strings.ReplaceAll(m[1], `\|`, "|"))
		}
		r.who = cells[1]
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal(`docs/USER_GUIDE.md has no command table: is its header still "| command | who | does |"?`)
	}
	return rows
}
