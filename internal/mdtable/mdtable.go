// Package mdtable reads the tables of the repository's Markdown documents,
// for the tests that hold a document to the code it describes
// (docs/USER_GUIDE.md's commands, docs/CONFIGURATION.md's variables, the
// manifests' settings).
package mdtable

import "strings"

// Rows are the cells of the rows of every table in doc whose header line
// starts with header ("| variable | default | meaning |"), each cell
// trimmed; a table ends at the first line that is not a row. A pipe
// escaped as `\|` stays in its cell, escaped.
func Rows(doc, header string) [][]string {
	var rows [][]string
	in := false
	for line := range strings.Lines(doc) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case !in || strings.HasPrefix(line, "| ---"):
		case !strings.HasPrefix(line, "|"):
			in = false
		default:
			rows = append(rows, Cells(line))
		}
	}
	return rows
}

// Cells splits a table row at the pipes that are not escaped, trimming
// each cell.
func Cells(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "|"), "|")
	var cells []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(line[start:]))
}
