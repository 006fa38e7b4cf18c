package text

import (
	"testing"
	"time"
)

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer line", 6, "a long…"},
		{"héllo", 2, "h…"}, // never inside a rune
	}
	for _, tt := range tests {
		if got := Shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a/b.go", "`a/b.go`"},
		{"has`tick", "``has`tick``"},
		{"`edge`", "`` `edge` ``"},
		{"two\nlines", "`two\\nlines`"},
		{"", "`  `"},
	}
	for _, tt := range tests {
		if got := CodeSpan(tt.in); got != tt.want {
			t.Errorf("CodeSpan(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{2 * time.Second, "2s"},
		{7 * 24 * time.Hour, "168h"},
	}
	for _, tt := range tests {
		if got := Duration(tt.in); got != tt.want {
			t.Errorf("Duration(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBytes(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{512, "512 B"},
		{3 << 20, "3.0 MiB"},
		{1536, "1.5 KiB"},
	}
	for _, tt := range tests {
		if got := Bytes(tt.in); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
