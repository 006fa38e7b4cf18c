package slackmd

import (
	"strings"
	"unicode"

	east "github.com/yuin/goldmark/extension/ast"
	"golang.org/x/text/width"
)

// table renders a GFM table as a ``` block with aligned columns.
func (r *renderer) table(n *east.Table) []line {
	var rows [][]string
	cols := 0
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			s := strings.TrimSpace(r.plain(cell, true))
			cells = append(cells, strings.ReplaceAll(s, "\n", " "))
		}
		cols = max(cols, len(cells))
		rows = append(rows, cells)
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	align := func(i int) east.Alignment {
		if i < len(n.Alignments) {
			return n.Alignments[i]
		}
		return east.AlignNone
	}
	format := func(row []string) string {
		var b strings.Builder
		b.WriteString("|")
		for i := range cols {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			gap := widths[i] - displayWidth(c)
			left := 0
			switch align(i) {
			case east.AlignRight:
				left = gap
			case east.AlignCenter:
				left = gap / 2
			}
			b.WriteString(" ")
			b.WriteString(strings.Repeat(" ", left))
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", gap-left))
			b.WriteString(" |")
		}
		return b.String()
	}
	out := []line{{s: fenceMark, code: true}}
	for i, row := range rows {
		out = append(out, line{s: esc(format(row)), code: true})
		if i == 0 {
			var b strings.Builder
			b.WriteString("|")
			for _, w := range widths {
				b.WriteString(strings.Repeat("-", w+2))
				b.WriteString("|")
			}
			out = append(out, line{s: b.String(), code: true})
		}
	}
	return append(out, line{s: fenceMark, code: true})
}

// displayWidth estimates the monospace width of s: East Asian wide and
// fullwidth runes count two columns, combining marks and zero-width
// characters none, and an emoji presentation selector (U+FE0F) widens the
// preceding narrow symbol ("⚠️") to two.
func displayWidth(s string) int {
	w, prev := 0, 0
	for _, r := range s {
		switch {
		case r == '\ufe0f':
			if prev == 1 {
				w++
				prev = 2
			}
		case r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff' ||
			(r >= '\ufe00' && r <= '\ufe0e') || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		default:
			switch width.LookupRune(r).Kind() {
			case width.EastAsianWide, width.EastAsianFullwidth:
				prev = 2
			default:
				prev = 1
			}
			w += prev
		}
	}
	return w
}
