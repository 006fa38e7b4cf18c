package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/testcli"
)

func fakeCLI(t *testing.T, version string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+version+" (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersionCommand(t *testing.T) {
	tests := []struct {
		name     string
		bin      func(t *testing.T) string
		args     []string
		code     int
		contains []string
	}{
		{"real CLI", func(t *testing.T) string { return testcli.Bin(t) }, []string{"version"}, 0, []string{"claudeops ", "claude CLI: 2.1.330", "compatibility: compatible"}},
		{"newer CLI warns", func(t *testing.T) string { return fakeCLI(t, "2.9.0") }, []string{"version"}, 0, []string{"degraded"}},
		{"older CLI refused", func(t *testing.T) string { return fakeCLI(t, "1.0.22") }, []string{"version"}, 78, []string{"incompatible", "older than the minimum"}},
		{"missing CLI", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }, []string{"version"}, 72, []string{"not found"}},
		{"bot start refuses an old CLI", func(t *testing.T) string { return fakeCLI(t, "1.0.22") }, nil, 78, []string{"older than the minimum"}},
		{"bot start refuses a missing CLI", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }, []string{"console"}, 72, []string{"not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := []string{"CLAUDEOPS_CLAUDE_BIN=" + tt.bin(t), "PATH=" + os.Getenv("PATH")}
			code := run(tt.args, env, strings.NewReader(""), &out, &errb)
			all := out.String() + errb.String()
			if code != tt.code {
				t.Errorf("exit %d, want %d; output:\n%s", code, tt.code, all)
			}
			for _, s := range tt.contains {
				if !strings.Contains(all, s) {
					t.Errorf("output lacks %q:\n%s", s, all)
				}
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, []string{"CLAUDEOPS_MAX_SESSIONS=zero"}, nil, &out, &errb); code != 78 || !strings.Contains(errb.String(), "CLAUDEOPS_MAX_SESSIONS") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	if code := run([]string{"frobnicate"}, nil, nil, &out, &errb); code != 2 {
		t.Errorf("unknown command exit %d", code)
	}
}

func TestMatrixConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		code int
		want string
	}{
		{"no user", []string{"MATRIX_HOMESERVER=http://127.0.0.1:1"}, 78, "MATRIX_USER_ID is required"},
		{"no credentials", []string{"MATRIX_HOMESERVER=http://127.0.0.1:1", "MATRIX_USER_ID=@bot:example.org"}, 78, "MATRIX_ACCESS_TOKEN"},
		{"not a user id", []string{"MATRIX_HOMESERVER=http://127.0.0.1:1", "MATRIX_USER_ID=bot", "MATRIX_ACCESS_TOKEN=t"}, 78, "is not a user id"},
		{"homeserver unreachable", []string{"MATRIX_HOMESERVER=http://127.0.0.1:1", "MATRIX_USER_ID=@bot:example.org", "MATRIX_ACCESS_TOKEN=t"}, 1, "matrix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := append([]string{"CLAUDEOPS_CLAUDE_BIN=" + fakeCLI(t, "2.1.330"), "PATH=" + os.Getenv("PATH"),
				"CLAUDEOPS_DB=" + filepath.Join(t.TempDir(), "db")}, tt.env...)
			code := run(nil, env, strings.NewReader(""), &out, &errb)
			if code != tt.code || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s", code, tt.code, tt.want, errb.String())
			}
		})
	}
}

// TestVersionPinsAgree: the CLI version is pinned in four places; they must
// not drift apart.
func TestVersionPinsAgree(t *testing.T) {
	want := claudeproc.TestedVersion.String()
	if testcli.Version != want {
		t.Errorf("testcli.Version %s != claudeproc.TestedVersion %s", testcli.Version, want)
	}
	b, err := os.ReadFile("../../scripts/dendrite")
	if m := regexp.MustCompile(`VERSION=(\S+)`).FindSubmatch(b); err != nil || m == nil || string(m[1]) != dendrite.Version {
		t.Errorf("scripts/dendrite pins %q, internal/dendrite.Version is %s (%v)", m, dendrite.Version, err)
	}
	for file, re := range map[string]string{
		"../../Dockerfile":   `ARG CLAUDE_CLI_VERSION=(\S+)`,
		"../../scripts/test": `CLI_VERSION=(\S+)`,
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(re).FindSubmatch(b)
		if m == nil || string(m[1]) != want {
			t.Errorf("%s pins %q, want %s", file, m, want)
		}
	}
}
