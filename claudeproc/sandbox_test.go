package claudeproc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/testcli"
)

// startSandboxed starts bin in sb with dir as the working directory and
// waits for it to end.
func startSandboxed(t *testing.T, sb Sandbox, bin, dir string) (ExitStatus, error) {
	t.Helper()
	files := make([]*os.File, 3) // the runner closes what it is given
	for i := range files {
		var err error
		if files[i], err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
	}
	h, err := sb.Start(context.Background(), Spec{
		Bin: bin, Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")},
		Session: Session{Channel: "console/main"},
		Stdin:   files[0], Stdout: files[1], Stderr: files[2],
	})
	if err != nil {
		return ExitStatus{}, err
	}
	if !strings.HasPrefix(h.Name(), "sandbox pid ") {
		t.Errorf("name %q", h.Name())
	}
	return h.Wait()
}

// TestSandboxRefuses: a session the sandbox cannot contain does not start:
// one whose directory is the root, a hidden path, inside one (also through
// a symlink), or inside the homes; a CLI inside a hidden path; a sandbox
// configured with relative paths. The control starts.
func TestSandboxRefuses(t *testing.T) {
	testcli.Bwrap(t)
	base := t.TempDir()
	state, homes, work := filepath.Join(base, "state"), filepath.Join(base, "homes"), filepath.Join(base, "work")
	for _, d := range []string{filepath.Join(state, "repo"), filepath.Join(homes, "other"), work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(work, "link")
	if err := os.Symlink(filepath.Join(state, "repo"), link); err != nil {
		t.Fatal(err)
	}
	hiddenCLI := filepath.Join(state, "claude")
	if err := os.WriteFile(hiddenCLI, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	brokenBwrap := filepath.Join(base, "bwrap")
	if err := os.WriteFile(brokenBwrap, []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	good := Sandbox{HomeBase: homes, Hide: []string{state}}
	tests := []struct {
		name    string
		sb      Sandbox
		bin     string
		dir     string
		wantErr string // "" for the control
	}{
		{"control", good, "true", work, ""},
		{"root", good, "true", "/", "refusing / "},
		{"the state directory", good, "true", state, "inside " + state},
		{"inside the state directory", good, "true", filepath.Join(state, "repo"), "inside " + state},
		{"a symlink into the state directory", good, "true", link, "inside " + state},
		{"inside the homes", good, "true", filepath.Join(homes, "other"), "inside " + homes},
		{"a CLI in a hidden path", good, hiddenCLI, work, "inside a hidden path"},
		{"no homes", Sandbox{Hide: []string{state}}, "true", work, "must be an absolute path"},
		{"relative homes", Sandbox{HomeBase: "homes"}, "true", work, "must be an absolute path"},
		{"relative hidden path", Sandbox{HomeBase: homes, Hide: []string{"state"}}, "true", work, "not absolute"},
		{"no bwrap", Sandbox{Bwrap: filepath.Join(base, "no-bwrap"), HomeBase: homes}, "true", work, "find bubblewrap"},
		{"bwrap cannot sandbox here", Sandbox{Bwrap: brokenBwrap, HomeBase: homes}, "true", work, "No permissions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Check, at the bot's start, refuses what Start would, but
			// for the CLI, which it does not know.
			checkErr := tt.sb.Check(context.Background(), tt.dir)
			if (tt.wantErr == "" || tt.bin != "true") != (checkErr == nil) ||
				checkErr != nil && !strings.Contains(checkErr.Error(), tt.wantErr) {
				t.Errorf("Check: %v", checkErr)
			}
			if tt.sb.Bwrap == brokenBwrap {
				return // Start cannot tell: bwrap starts, then fails
			}
			st, err := startSandboxed(t, tt.sb, tt.bin, tt.dir)
			if tt.wantErr == "" {
				if err != nil || st.Code != 0 {
					t.Fatalf("control did not run: %v %+v", err, st)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to say %q", err, tt.wantErr)
			}
		})
	}
}

// TestSandboxEnv: HOME is the thread's home; TMPDIR and CLAUDE_CONFIG_DIR,
// which would name places read-only inside, are dropped.
func TestSandboxEnv(t *testing.T) {
	got := sandboxEnv([]string{"PATH=/usr/bin", "HOME=/home/bot", "TMPDIR=/var/bot-tmp",
		"CLAUDE_CONFIG_DIR=/home/bot/.claude", "ANTHROPIC_API_KEY=k", "HOMER=x"}, "/homes/abc")
	want := []string{"PATH=/usr/bin", "ANTHROPIC_API_KEY=k", "HOMER=x", "HOME=/homes/abc"}
	if !slices.Equal(got, want) {
		t.Errorf("env = %q, want %q", got, want)
	}
}

// TestSandboxCanMount: the sandbox shows the built skills' directory
// unless it lies in what it hides (the homes, Hide); elsewhere a session
// gets no skills rather than a refused start.
func TestSandboxCanMount(t *testing.T) {
	homes, hidden, other := t.TempDir(), t.TempDir(), t.TempDir()
	s := Sandbox{HomeBase: homes, Hide: []string{hidden}}
	for dir, want := range map[string]bool{other: true, homes: false, hidden: false, filepath.Join(other, "absent"): false} {
		if err := os.MkdirAll(filepath.Join(hidden, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := s.CanMount(dir); got != want {
			t.Errorf("CanMount(%s) = %v, want %v", dir, got, want)
		}
	}
	if s.CanMount(filepath.Join(hidden, "x")) {
		t.Errorf("CanMount shows a directory inside a hidden one")
	}
}
