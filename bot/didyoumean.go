package bot

import "strings"

// How far a word is from a command word as slips of the finger: what
// nearCommand (commands.go) measures a one-word message by, to ask "did
// you mean `status`?" of "stauts" instead of spending a turn on it.

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

// sentWhole are real words a person sends alone to Claude, one slip from
// a command word: "more" after an answer asks for more, not for `mode`;
// "sent" says a thing was sent, not `set`.
// Found by running nearCommand over the words people send as a whole
// message (TestNearCommand's prompts).
var sentWhole = map[string]bool{"more": true, "news": true, "costs": true, "sent": true}

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
