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
	"github.com/claudeops/claudeops/internal/testrunner"
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
		{"newer CLI warns", func(t *testing.T) string { return fakeCLI(t, "2.9.0") }, []string{"version"}, 0, []string{"compatibility: likely compatible", "newer than the tested"}},
		{"unreadable version runs degraded", func(t *testing.T) string { return fakeCLI(t, "nightly") }, []string{"version"}, 0, []string{"compatibility: degraded", "cannot read its version"}},
		{"older CLI refused", func(t *testing.T) string { return fakeCLI(t, "1.0.22") }, []string{"version"}, 78, []string{"incompatible", "older than the minimum"}},
		{"missing CLI", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }, []string{"version"}, 72, []string{"not found"}},
		{"bot start refuses an old CLI", func(t *testing.T) string { return fakeCLI(t, "1.0.22") }, nil, 78, []string{"older than the minimum"}},
		{"bot start refuses a missing CLI", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }, []string{"console"}, 72, []string{"not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := []string{"CLAUDEOPS_CLAUDE_BIN=" + tt.bin(t), "PATH=" + os.Getenv("PATH")}
			code := run(tt.args, testrunner.Explicit(env), strings.NewReader(""), &out, &errb)
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

// TestVersionCommandRealCLI: `claudeops version` reads the CLI under test
// (whichever scripts/test runs) and places it in the supported range.
func TestVersionCommandRealCLI(t *testing.T) {
	bin := testcli.Bin(t)
	want := testcli.BinVersion(t, bin)
	level := "compatible"
	if v, err := claudeproc.ParseVersion(want); err == nil && v.Compare(claudeproc.TestedVersion) > 0 {
		level = "likely compatible"
	}
	var out, errb bytes.Buffer
	code := run([]string{"version"}, []string{"CLAUDEOPS_CLAUDE_BIN=" + bin, "PATH=" + os.Getenv("PATH")}, strings.NewReader(""), &out, &errb)
	all := out.String() + errb.String()
	if code != 0 {
		t.Errorf("exit %d; output:\n%s", code, all)
	}
	for _, s := range []string{"claudeops ", "claude CLI: " + want + " (", "compatibility: " + level + " — ",
		"supported: >= " + claudeproc.MinVersion.String() + ", tested up to " + claudeproc.TestedVersion.String()} {
		if !strings.Contains(all, s) {
			t.Errorf("output lacks %q:\n%s", s, all)
		}
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
			code := run(nil, testrunner.Explicit(env), strings.NewReader(""), &out, &errb)
			if code != tt.code || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s", code, tt.code, tt.want, errb.String())
			}
		})
	}
}

// TestVersionPinsAgree: the tested CLI version is pinned in five places
// (claudeproc.TestedVersion, testcli.Version, the Dockerfile, scripts/test
// and scripts/docker-engine); they must not drift apart. The minimum is
// named only by claudeproc.MinVersion: scripts/test reads it from
// `claudeops version` (TestVersionCommandRealCLI holds that line).
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
		"../../Dockerfile":            `ARG CLAUDE_CLI_VERSION=(\S+)`,
		"../../scripts/test":          `(?m)^CLI_VERSION=(\S+)`,
		"../../scripts/docker-engine": `(?m)^CLI_VERSION=(\S+)`,
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
