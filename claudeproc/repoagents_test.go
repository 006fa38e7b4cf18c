package claudeproc

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRepoAgents(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{
		"secret.md":       "---\nname: secret\ndescription: SECRET_OUTSIDE\n---\nSECRET_OUTSIDE\n",
		"agents/other.md": "---\nname: other\ndescription: SECRET_DIR\n---\nSECRET_DIR\n",
	})
	const reviewer = "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\n---\nYou review.\n"
	tests := []struct {
		name    string
		files   map[string]string
		plant   func(t *testing.T, dir string)
		want    map[string]repoAgent
		skipped int
	}{
		{name: "none", want: nil},
		{name: "one", files: map[string]string{".claude/agents/r.md": reviewer},
			want: map[string]repoAgent{"reviewer": {Description: "Reviews code", Prompt: "You review.", Tools: []string{"Read", "Grep"}}}},
		{name: "list tools, crlf, model", files: map[string]string{".claude/agents/r.md": "---\r\nname: r\r\ndescription: |\r\n  two\r\n  lines\r\ntools:\r\n  - Read\r\ndisallowedTools: Bash\r\nmodel: haiku\r\n---\r\nBody\r\n"},
			want: map[string]repoAgent{"r": {Description: "two\nlines\n", Prompt: "Body", Tools: []string{"Read"}, DisallowedTools: []string{"Bash"}, Model: "haiku"}}},
		{name: "keys that run or decide are left out", files: map[string]string{".claude/agents/h.md": "---\nname: h\ndescription: d\npermissionMode: bypassPermissions\n" +
			"hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          command: touch x\nmcpServers:\n  x:\n    command: sh\nskills: [a]\nmemory: project\nisolation: worktree\n---\nB\n"},
			want: map[string]repoAgent{"h": {Description: "d", Prompt: "B"}}},
		{name: "not agents", files: map[string]string{".claude/agents/a.md": "no front matter", ".claude/agents/b.md": "---\nname: b\n---\nno description\n",
			".claude/agents/c.md": "---\nname: [\n---\n", ".claude/agents/notes.txt": reviewer, ".claude/agents/big.md": "---\nname: big\ndescription: d\n---\n" + strings.Repeat("x", maxAgentFile)},
			skipped: 4},
		{name: "symlinks out", plant: func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "secret.md"), filepath.Join(dir, ".claude/agents/s.md"))
		}, files: map[string]string{".claude/agents/r.md": reviewer},
			want: map[string]repoAgent{"reviewer": {Description: "Reviews code", Prompt: "You review.", Tools: []string{"Read", "Grep"}}}, skipped: 1},
		{name: "symlinked agents directory", plant: func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "agents"), filepath.Join(dir, ".claude/agents"))
		}, skipped: 1},
		{name: "subdirectories", files: map[string]string{".claude/agents/team/deep/r.md": reviewer},
			want: map[string]repoAgent{"reviewer": {Description: "Reviews code", Prompt: "You review.", Tools: []string{"Read", "Grep"}}}},
		{name: "symlinked subdirectory out", plant: func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "agents"), filepath.Join(dir, ".claude/agents/team"))
			// Not entered at all (WalkDir follows no link).
		}, files: map[string]string{".claude/agents/r.md": reviewer},
			want: map[string]repoAgent{"reviewer": {Description: "Reviews code", Prompt: "You review.", Tools: []string{"Read", "Grep"}}}},
		{name: "relative symlink inside", plant: func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"docs/r.md": reviewer})
			symlink(t, "../../docs/r.md", filepath.Join(dir, ".claude/agents/r.md"))
			// An absolute link is refused even when it leads inside.
			symlink(t, filepath.Join(dir, "docs/r.md"), filepath.Join(dir, ".claude/agents/abs.md"))
		}, skipped: 1, want: map[string]repoAgent{"reviewer": {Description: "Reviews code", Prompt: "You review.", Tools: []string{"Read", "Grep"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			if tt.plant != nil {
				tt.plant(t, dir)
			}
			got, skipped, err := RepoAgents(dir)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, "SECRET") {
				t.Errorf("a file outside the directory was read: %s", got)
			}
			var agents map[string]repoAgent
			if got != "" {
				if err := json.Unmarshal([]byte(got), &agents); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(agents, tt.want) {
				t.Errorf("agents %+v, want %+v", agents, tt.want)
			}
			if len(skipped) != tt.skipped {
				t.Errorf("skipped %q, want %d", skipped, tt.skipped)
			}
		})
	}
	if _, _, err := RepoAgents(filepath.Join(outside, "nope")); err == nil {
		t.Errorf("a missing working directory: no error")
	}
}
