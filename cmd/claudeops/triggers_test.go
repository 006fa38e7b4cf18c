package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTriggersFileProblems: a triggers file's problems are configuration
// problems, each with its line, all at once; the file needs the HTTP
// listener, a review trigger a forge; the secret is never said.
func TestTriggersFileProblems(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("a-secret-that-is-long-enough\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "triggers.yaml")
	content := "triggers:\n  - name: ok\n    kind: generic\n    channel: console/console\n    secret_file: " + secret + "\n    per_hour: 1\n    prompt: x\n  - name: bad\n    kind: smoke\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	review := filepath.Join(dir, "review.yaml")
	if err := os.WriteFile(review, []byte("triggers:\n  - name: reviews\n    kind: gitea\n    review: true\n    secret_file: "+secret+"\n    repos: [acme/api]\n    per_hour: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"problems with their lines", []string{"CLAUDEOPS_HTTP_ADDR=127.0.0.1:0", "CLAUDEOPS_TRIGGERS_FILE=" + file},
			[]string{`CLAUDEOPS_TRIGGERS_FILE`, `line 8: trigger "bad": kind "smoke"`, `line 8: trigger "bad": secret_file is missing`, `line 8: trigger "bad": prompt is missing`}},
		{"no listener", []string{"CLAUDEOPS_TRIGGERS_FILE=" + file}, []string{"set CLAUDEOPS_HTTP_ADDR too"}},
		{"a review trigger without a forge", []string{"CLAUDEOPS_HTTP_ADDR=127.0.0.1:0", "CLAUDEOPS_TRIGGERS_FILE=" + review}, []string{`the review trigger "reviews" needs the forge`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(tc.env)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q: want %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "a-secret-that") {
				t.Errorf("the secret in %q", err)
			}
		})
	}
}
