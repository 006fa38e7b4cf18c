package claudeproc

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoCommandRefused: names that are not a command file of the
// repository, and files the bot does not read: a symlink out of the
// working directory, a directory, a file over the cap.
func TestRepoCommandRefused(t *testing.T) {
	out := t.TempDir()
	writeTree(t, out, map[string]string{"secret.md": "SECRET\n", ".claude/commands/x.md": "SECRET\n", "skill/SKILL.md": "SECRET\n"})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".claude/commands/ok.md":       "fine\n",
		".claude/commands/big.md":      strings.Repeat("x", maxCommandFile+1),
		".claude/commands/dir.md/a.md": "a\n",
		"outside.md":                   "not a command\n",
	})
	symlink(t, filepath.Join(out, "secret.md"), filepath.Join(dir, ".claude/commands/link.md"))
	symlink(t, "../../outside.md", filepath.Join(dir, ".claude/commands/rel.md"))
	symlink(t, filepath.Join(out, ".claude/commands"), filepath.Join(dir, ".claude/commands/sub"))
	symlink(t, filepath.Join(out, "skill"), filepath.Join(dir, ".claude/skills/away"))
	writeTree(t, dir, map[string]string{".claude/skills/team/deep/SKILL.md": "nested\n"})
	for _, tc := range []struct {
		name   string
		noSuch bool // ErrNoCommand, else another error
	}{
		{"missing", true}, {"", true}, {"../outside", true}, {"a/b", true}, {"team:..", true},
		{".hidden", true}, {"ok:", true},
		{"team:deep", true}, // skills are one level deep
		{"link", false}, {"sub:x", false}, {"dir", false}, {"big", false}, {"away", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := RepoCommand(dir, tc.name, "")
			if err == nil {
				t.Fatalf("RepoCommand(%q) = %v, want an error", tc.name, blocks)
			}
			if errors.Is(err, ErrNoCommand) != tc.noSuch {
				t.Errorf("RepoCommand(%q): %v; ErrNoCommand wanted: %v", tc.name, err, tc.noSuch)
			}
		})
	}
	// A relative link that stays inside is the file it names, as the CLI reads it.
	if b, err := RepoCommand(dir, "rel", ""); err != nil || !strings.Contains(b[1].Text, "not a command") {
		t.Errorf("RepoCommand(rel) = %v, %v", b, err)
	}
	if _, err := RepoCommand(filepath.Join(dir, "gone"), "ok", ""); err == nil || errors.Is(err, ErrNoCommand) {
		t.Errorf("a working directory that cannot be opened: %v", err)
	}
}

// TestRepoCommandSkill: a skill typed as a command says where its files
// are, as the CLI does; a command of the same name comes first.
func TestRepoCommandSkill(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".claude/skills/lint/SKILL.md": "---\nname: lint\nallowed-tools: Bash\n---\nLint $ARGUMENTS\n",
		".claude/skills/both/SKILL.md": "the skill\n",
		".claude/commands/both.md":     "the command\n",
	})
	b, err := RepoCommand(dir, "lint", "src")
	want := "Base directory for this skill: " + filepath.Join(dir, ".claude/skills/lint") + "\n\nLint src\n"
	if err != nil || len(b) != 2 || b[1].Text != want {
		t.Errorf("RepoCommand(lint) = %+v, %v; want its second block %q", b, err, want)
	}
	if b, err := RepoCommand(dir, "both", ""); err != nil || b[1].Text != "the command\n" {
		t.Errorf("RepoCommand(both) = %+v, %v; want the command's text", b, err)
	}
}

// TestExpandArgs: the placeholders as the CLI fills them (measured with
// TestRealCLIRepositoryCommands; the edges as 2.1.330's own code reads).
func TestExpandArgs(t *testing.T) {
	for _, tc := range []struct{ body, args, want string }{
		{"all=$ARGUMENTS", "a b", "all=a b"},
		{"$0 $1 $2", `"x y" 'z w' v\ u`, "x y z w v u"},
		{"$ARGUMENTS[1]", "a b", "b"},
		{"$5 $ARGUMENTS[5]", "a", "$5 $ARGUMENTS[5]\n\nARGUMENTS: a"},
		{"$0 $5", "a", "a $5"},
		{"$1abc $0_ $0", "a", "$1abc $0_ a"},
		{`\$1abc $0`, "a", "$1abc a"},
		{"$ARGUMENTSx", "a", "ax"},
		{`\$1 $0`, "a", "$1 a"},
		{"plain\n", "x y", "plain\n\n\nARGUMENTS: x y"},
		{"plain\n", "", "plain\n"},
		{"$ARGUMENTS.", "", "."},
		{"!`touch x` $0", "a", "!`touch x` a"},
	} {
		if got := expandArgs(tc.body, tc.args); got != tc.want {
			t.Errorf("expandArgs(%q, %q) = %q, want %q", tc.body, tc.args, got, tc.want)
		}
	}
}
