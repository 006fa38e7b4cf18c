package adapters

import "testing"

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"ls -la\n\tx":           "ls -la\n\tx",
		"rm -rf /\r# harmless":  `rm -rf /\x0d# harmless`,
		"\x1b[2Jclear":          `\x1b[2Jclear`,
		"echo \u202eevil":       `echo \u202eevil`,
		"a\u200bb\ufeff":        `a\u200bb\ufeff`,
		"tout à fait: ümlaut 🙂": "tout à fait: ümlaut 🙂",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHead(t *testing.T) {
	fits := func(n int) func(string) bool { return func(s string) bool { return len(s) <= n } }
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"one\ntwo\nthree", 100, "one\ntwo\nthree"},
		{"one\ntwo\nthree", 8, "one\ntwo"},
		{"one\ntwo\nthree", 3, "one"},
		{"abcdef\nx", 4, "abcd"},
		{"", 0, ""},
	} {
		if got := Head(tt.in, fits(tt.n)); got != tt.want {
			t.Errorf("Head(%q, ≤%d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
