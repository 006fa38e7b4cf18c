package triggers

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestParseProblems: every problem of a file is said at once, each with
// its line; the secret is never in one.
func TestParseProblems(t *testing.T) {
	read := func(path string) ([]byte, error) {
		switch path {
		case "short":
			return []byte("tiny"), nil
		case "good":
			return []byte("a-secret-of-some-length"), nil
		}
		return nil, os.ErrNotExist
	}
	file := `triggers:
  - name: Bad_Name
    kind: gitea
    channel: nowhere
    secret_file: good
    per_hour: 1
    prompt: x
  - name: ok
    kind: smoke
    channel: slack/C1
    secret_file: short
    per_hour: 0
    prompt: "{{.x"
  - name: gh
    kind: github
    channel: slack/C1
    secret_file: missing
    per_hour: 1
    prompt: x
    colour: red
`
	_, err := Parse([]byte(file), read)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err %v, want Problems", err)
	}
	for _, want := range []struct {
		line int
		has  string
	}{
		{2, `name "Bad_Name"`}, {2, "channel \"nowhere\""}, {2, "lists the repositories"}, {2, "which events"},
		{8, `kind "smoke"`}, {8, "shorter than 16 bytes"}, {8, "per_hour"}, {8, "prompt:"},
		{14, "secret_file:"}, {20, `unknown key "colour"`},
	} {
		found := false
		for _, p := range ps {
			found = found || (p.Line == want.line && strings.Contains(p.Msg, want.has))
		}
		if !found {
			t.Errorf("no problem at line %d with %q in %v", want.line, want.has, ps)
		}
	}
	if strings.Contains(err.Error(), "a-secret-of") || strings.Contains(err.Error(), "tiny") {
		t.Errorf("a secret in the problems: %v", err)
	}
}
