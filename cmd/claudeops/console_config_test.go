package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/testrunner"
)

// TestConsoleSettingsChecked: the console's settings are checked with the
// rest of the configuration before anything starts (exit 78, the variable
// named, nothing started).
func TestConsoleSettingsChecked(t *testing.T) {
	work := t.TempDir()
	dir := t.TempDir()
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"line cap 0", []string{"CLAUDEOPS_CONSOLE_MAX_LINE=0"}, "CLAUDEOPS_CONSOLE_MAX_LINE=0: want a whole number, at least 1"},
		{"negative line cap", []string{"CLAUDEOPS_CONSOLE_MAX_LINE=-4096"}, "CLAUDEOPS_CONSOLE_MAX_LINE=-4096: want a whole number, at least 1"},
		{"line cap not a number", []string{"CLAUDEOPS_CONSOLE_MAX_LINE=1MiB"}, "CLAUDEOPS_CONSOLE_MAX_LINE"},
		{"log file in a missing directory", []string{"CLAUDEOPS_LOG_FILE=" + filepath.Join(dir, "missing", "bot.log")}, "bot.log: its directory " + filepath.Join(dir, "missing") + " does not exist"},
		{"log file is a directory", []string{"CLAUDEOPS_LOG_FILE=" + dir}, "CLAUDEOPS_LOG_FILE=" + dir + ": is not a regular file"},
		{"log file in the sessions' working directory", []string{"CLAUDEOPS_LOG_FILE=" + filepath.Join(work, "bot.log")}, "overlap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{
				"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
				"CLAUDEOPS_CLAUDE_BIN=" + fakeCLI(t, "2.1.330"), "CLAUDEOPS_WORKDIR=" + work,
				"CLAUDEOPS_STATE_DIR=" + filepath.Join(t.TempDir(), "state"),
			}, tt.env...)
			var out, errb bytes.Buffer
			code := run([]string{"console"}, testrunner.Explicit(env), strings.NewReader(""), &out, &errb)
			if code != exitConfig || !strings.Contains(errb.String(), tt.want) || !strings.Contains(errb.String(), "nothing was started") {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", code, exitConfig, tt.want, errb.String())
			}
			if out.Len() > 0 {
				t.Errorf("stdout: %q", out.String())
			}
		})
	}
}
