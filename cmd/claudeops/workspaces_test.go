package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWorkspacesPlacement: the workspaces lie apart from the bot's state
// and from the default working directory, and channel bindings are
// well formed; every problem is listed at once.
func TestWorkspacesPlacement(t *testing.T) {
	home, work, state := t.TempDir(), t.TempDir(), t.TempDir()
	base := []string{"HOME=" + home, "CLAUDEOPS_WORKDIR=" + work, "CLAUDEOPS_STATE_DIR=" + state}
	tests := []struct {
		name string
		env  []string
		want []string // substrings of the problem lines, in order
	}{
		{"default under the XDG data home", nil, nil},
		{"apart", []string{"CLAUDEOPS_WORKSPACES=" + filepath.Join(t.TempDir(), "ws")}, nil},
		{"inside the working directory", []string{"CLAUDEOPS_WORKSPACES=" + filepath.Join(work, "ws")},
			[]string{"CLAUDEOPS_WORKSPACES=" + filepath.Join(work, "ws") + ": it and CLAUDEOPS_WORKDIR"}},
		{"holding the working directory", []string{"CLAUDEOPS_WORKSPACES=" + filepath.Dir(work)},
			[]string{"it and the bot's state", "it and CLAUDEOPS_WORKDIR"}},
		{"inside the state", []string{"CLAUDEOPS_WORKSPACES=" + filepath.Join(state, "ws")},
			[]string{"it and the bot's state"}},
		{"bindings", []string{"CLAUDEOPS_REPOS=slack/C1=/srv/git/api.git,matrix/!r:example.org=https://git.example.org/x.git"}, nil},
		{"malformed bindings, credentials hidden", []string{"CLAUDEOPS_REPOS=slack=/x,https://user:hunter2@git.example.org/x.git,console/console="},
			[]string{`not "slack=/x"`, `not "https://…@git.example.org/x.git"`, `not "console/console="`}},
		{"a TTL of 0", []string{"CLAUDEOPS_WORKTREE_TTL=0"}, []string{"CLAUDEOPS_WORKTREE_TTL=0: want a duration above 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(append(append([]string{}, base...), tt.env...))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected problems:\n%v", err)
				}
				if tt.env == nil && c.Workspaces != filepath.Join(home, ".local", "share", "claudeops", "workspaces") {
					t.Errorf("default workspaces %s", c.Workspaces)
				}
				return
			}
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v; want a *configError", err)
			}
			lines := ce.lines()
			if len(lines) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if i < len(lines) && !strings.Contains(lines[i], w) {
					t.Errorf("line %d %q lacks %q", i+1, lines[i], w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("a credential in the problem lines:\n%s", err)
			}
		})
	}
}

// TestWorkspaceClonesProtected: the clones (whose config and hooks the
// bot's own git reads) and the skills built for sessions are among the paths no rule, grant or mode opens to
// a tool; the worktrees are not.
func TestWorkspaceClonesProtected(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	c, err := loadConfig([]string{"HOME=" + t.TempDir(), "CLAUDEOPS_WORKDIR=" + t.TempDir(), "CLAUDEOPS_WORKSPACES=" + ws})
	if err != nil {
		t.Fatal(err)
	}
	got := botConfig(c, nil, nil).ProtectedPaths
	for _, want := range []string{filepath.Join(ws, "repos"), filepath.Join(ws, "home"), filepath.Join(ws, "tmp"), filepath.Join(ws, "skills")} {
		if !slices.Contains(got, want) {
			t.Errorf("protected paths %v lack %s", got, want)
		}
	}
	if b := botConfig(c, nil, nil).SkillsBase; b != filepath.Join(ws, "skills") {
		t.Errorf("the skills are built in %q, want %s", b, filepath.Join(ws, "skills"))
	}
	if slices.Contains(got, filepath.Join(ws, "trees")) || slices.Contains(got, ws) {
		t.Errorf("protected paths %v hold the sessions' worktrees", got)
	}
}

// TestClearSkillsAtStart: what a killed run left of its sessions' built
// skills is gone at the next start; nothing else of the workspaces is.
func TestClearSkillsAtStart(t *testing.T) {
	ws := t.TempDir()
	left := filepath.Join(ws, "skills", "skills-123", "skills", "lint")
	trees := filepath.Join(ws, "trees")
	for _, d := range []string{left, trees} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	clearSkills(config{Workspaces: ws}, slog.New(slog.DiscardHandler))
	if _, err := os.Stat(filepath.Join(ws, "skills")); !os.IsNotExist(err) {
		t.Errorf("the earlier run's skills are left: %v", err)
	}
	if _, err := os.Stat(trees); err != nil {
		t.Errorf("the worktrees went too: %v", err)
	}
}
