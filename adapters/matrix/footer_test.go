package matrix_test

import (
	"testing"

	"github.com/claudeops/claudeops/adapters/matrix"
)

// TestOpenFence: a footer joins a final text only when the text leaves no
// code block open; the model's text must not swallow it.
func TestOpenFence(t *testing.T) {
	cases := []struct {
		md   string
		open bool
	}{
		{"plain answer", false},
		{"```go\nx := 1\n```\ndone", false},
		{"```go\nx := 1", true},
		{"~~~\nunclosed", true},
		{"```\n~~~\n```", false},
		{"```\ncode\n```\n\n```sh\nls", true},
		{"  ```\nindented fence\n  ```", false},
	}
	for _, c := range cases {
		if got := matrix.OpenFence(c.md); got != c.open {
			t.Errorf("OpenFence(%q) = %v, want %v", c.md, got, c.open)
		}
	}
}
