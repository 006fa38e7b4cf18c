package bot

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
)

// A one-word message that is a slip of the finger away from a command
// word ("stauts") is asked about, "did you mean `status`?", instead of
// going to Claude as a paid prompt; a word far from every command
// ("hello", "thanks", "yes") goes to Claude as before. A backslash before
// a message (escape) sends it to Claude as it is, whatever its first word.

// escape, before a message that would be taken as a command, a typed
// decision, a slash command or a near-command, sends the rest to Claude as
// a prompt (as `\ls` runs ls past a shell alias).
const escape = `\`

// escaped is text without its escape when the rest is something the bot
// would take for itself; ok false otherwise (a backslash that starts
// other text, `\d+ matches digits`, is the prompt's own).
func (w *worker) escaped(text string, user string) (string, bool) {
	rest, ok := strings.CutPrefix(text, escape)
	if !ok || rest == "" || unicode.IsSpace(rune(rest[0])) {
		return "", false
	}
	if c, _ := findCommand(w.b.commands, rest); c != nil {
		return rest, true
	}
	if _, ok := parseTypedReply(rest); ok {
		return rest, true
	}
	if _, _, ok := parseSlash(rest); ok {
		return rest, true
	}
	return rest, len(nearCommand(w.b.commands, rest, w.mayChange(user))) > 0
}

// suggestCommand answers a one-word text near a command the sender may
// run here with "did you mean …?"; it reports whether it did.
func (w *worker) suggestCommand(ctx context.Context, ev adapters.Event, text string) bool {
	names := nearCommand(w.b.commands, text, w.mayChange(ev.User.ID))
	if len(names) == 0 {
		return false
	}
	w.log.Info("command typo", "word", text, "commands", names, "user", ev.User.ID)
	w.reply(ctx, fmt.Sprintf("Did you mean `%s`? Nothing was sent to Claude. To send “%s” to Claude as it is, begin with a backslash: `%s%s`.",
		strings.Join(names, "` or `"), text, escape, text))
	return true
}

// nearCommand are the names of the commands of table that word is a typo
// of (typoDistance within maxTypos), the closest, in the table's order,
// among those the sender may run in the thread (mayChange: they may
// change it); none when word is more than one word, a command itself, or
// near none.
func nearCommand(table []row, word string, mayChange bool) []string {
	if strings.ContainsFunc(word, unicode.IsSpace) {
		return nil
	}
	w := []rune(strings.ToLower(word))
	var best []string
	bestD := maxTypos(len(w)) // the farthest a typo may be, then the closest found
	for i := range table {
		r := &table[i]
		name := []rune(r.Name)
		// A command whose every form changes the thread (stop, new) is
		// the starter's and admins'; the others have a form for everyone.
		if !sameStart(w, name) || r.Who == thread.Starter && r.Max == 0 && !mayChange {
			continue
		}
		switch d := typoDistance(w, name); {
		case d == 0 || d > bestD:
		case d == bestD && best != nil:
			best = append(best, r.Name)
		default:
			best, bestD = []string{r.Name}, d
		}
	}
	return best
}

// maxTypos is how far a word of n letters may be from a command to be
// its typo: one slip from 3 letters, two from 8; shorter words ("ok",
// "hi") are near too much to be taken for anything.
func maxTypos(n int) int {
	switch {
	case n < 3 || n > 20:
		return 0
	case n < 8:
		return 1
	}
	return 2
}

// sameStart: a and b begin with the same letter, or with the first two
// swapped. A person rarely misses a word's first letter; without this,
// "code" and "most" would be typos of mode and cost.
func sameStart(a, b []rune) bool {
	switch {
	case len(a) == 0 || len(b) == 0:
		return false
	case a[0] == b[0]:
		return true
	}
	return len(a) > 1 && len(b) > 1 && a[0] == b[1] && a[1] == b[0]
}

// typoDistance is the Damerau-Levenshtein distance (optimal string
// alignment) of a and b as slips of the finger: a letter missed, doubled
// or added, two neighbours swapped cost 1 each; a letter typed for
// another costs 1 when their keys touch on a QWERTY keyboard ("mide" for
// mode), 2 otherwise (so "more" is near mode but "redo" is not near repo).
func typoDistance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			sub := 0
			if a[i-1] != b[j-1] {
				sub = 2
				if keysTouch(a[i-1], b[j-1]) {
					sub = 1
				}
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+sub)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// qwerty are the keyboard's letter rows, each shifted a little right of
// the one above.
var qwerty = []string{"qwertyuiop", "asdfghjkl", "zxcvbnm"}

// keysTouch: x and y are neighbouring letter keys on a QWERTY keyboard
// (in a row, or diagonally in the rows above and below).
func keysTouch(x, y rune) bool {
	row, col := keyAt(x)
	r2, c2 := keyAt(y)
	if row < 0 || r2 < 0 {
		return false
	}
	switch r2 - row {
	case 0:
		return c2 == col-1 || c2 == col+1
	case 1: // y below x: the keys under x are at col-1 and col
		return c2 == col-1 || c2 == col
	case -1:
		return c2 == col || c2 == col+1
	}
	return false
}

func keyAt(r rune) (row, col int) {
	for i, s := range qwerty {
		if j := strings.IndexRune(s, r); j >= 0 {
			return i, j
		}
	}
	return -1, -1
}
