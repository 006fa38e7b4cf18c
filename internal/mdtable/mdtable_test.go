package mdtable

import (
	"slices"
	"testing"
)

func TestRows(t *testing.T) {
	doc := "# A\n\n| name | what |\n| --- | --- |\n| `a` | one |\n|  `b \\| c`  |  two  |\n\ntext | not a row\n\n" +
		"| other | x |\n| --- | --- |\n| `z` | no |\n\n| name | what |\n| --- | --- |\n| `d` | |\n"
	got := Rows(doc, "| name | what |")
	want := [][]string{{"`a`", "one"}, {"`b \\| c`", "two"}, {"`d`", ""}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Rows = %q, want %q", got, want)
	}
}

func TestCells(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"| a | b |", []string{"a", "b"}},
		{"|a|b", []string{"a", "b"}},
		{`| x \| y | \\ |`, []string{`x \| y`, `\\`}},
		{"| one |", []string{"one"}},
	} {
		if got := Cells(c.line); !slices.Equal(got, c.want) {
			t.Errorf("Cells(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}
