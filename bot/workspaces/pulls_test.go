package workspaces

import "testing"

func TestFenced(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fix it", "```text\nfix it\n```\n"},
		{"a ``` b", "````text\na ``` b\n````\n"},
		{"x\n`````\n", "``````text\nx\n`````\n``````\n"},
	} {
		if got := fenced(tc.in); got != tc.want {
			t.Errorf("fenced(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPRArgs(t *testing.T) {
	for _, tc := range []struct {
		in    string
		draft bool
		title string
	}{
		{"", false, ""},
		{"Fix the parser", false, "Fix the parser"},
		{"--draft", true, ""},
		{"--draft  Fix it", true, "Fix it"},
		{"--drafting notes", false, "--drafting notes"},
	} {
		if d, ti := prArgs(tc.in); d != tc.draft || ti != tc.title {
			t.Errorf("prArgs(%q) = %v, %q; want %v, %q", tc.in, d, ti, tc.draft, tc.title)
		}
	}
}
