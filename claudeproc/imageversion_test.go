package claudeproc

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// printed is an image whose CLI prints out, or fails with err.
type printed struct {
	out string
	err error
}

func (p printed) CLIVersion(context.Context, string) (string, error) { return p.out, p.err }

// TestImageCLI: the image's CLI gets CheckVersion's levels and errors; at
// start, missing or too old stops the bot, newer or unreadable is a
// warning in the bot's log.
func TestImageCLI(t *testing.T) {
	tests := []struct {
		name     string
		image    printed
		level    Compatibility
		checkErr error  // CheckImageVersion's, by errors.Is
		startErr string // in StartImageCLI's error; "" for none
		logged   string // in the log when it starts
	}{
		{"tested", printed{out: TestedVersion.String() + " (Claude Code)"}, CompatFull, nil, "", "level=INFO msg=\"claude CLI in the image\""},
		{"newer", printed{out: "9.0.0 (Claude Code)"}, CompatLikely, nil, "", "level=WARN msg=\"claude CLI in the image is newer"},
		{"unreadable", printed{out: "Claude Code"}, CompatDegraded, nil, "", "level=WARN msg=\"claude CLI in the image: cannot read its version"},
		{"too old", printed{out: "1.0.22 (Claude Code)"}, CompatIncompatible, ErrIncompatible, "1.0.22 in the image is older than the minimum", ""},
		{"missing", printed{err: errors.New("exec: claude: not found")}, CompatNotFound, ErrNotFound,
			"claude (in the runner's image) did not run: exec: claude: not found (CLAUDEOPS_CLAUDE_BIN names the CLI in the image)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := CheckImageVersion(t.Context(), tt.image, "claude")
			if info.Level != tt.level || !errors.Is(err, tt.checkErr) || (tt.checkErr == nil) != (err == nil) || info.Message == "" {
				t.Errorf("check: %+v, %v; want level %s, error %v", info, err, tt.level, tt.checkErr)
			}
			var log bytes.Buffer
			_, err = StartImageCLI(t.Context(), tt.image, "claude", slog.New(slog.NewTextHandler(&log, nil)))
			switch {
			case tt.startErr == "" && err != nil, tt.startErr != "" && (err == nil || !strings.Contains(err.Error(), tt.startErr)):
				t.Errorf("start: %v; want an error saying %q", err, tt.startErr)
			case !strings.Contains(log.String(), tt.logged):
				t.Errorf("start logged %q; want %q", log.String(), tt.logged)
			}
		})
	}
}
