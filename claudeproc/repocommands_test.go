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
	writeTree(t, out, map[string]string{"secret.md": "SECRET\n", ".claude/commands/x.md": "SECRET\n"})
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
	for _, tc := range []struct {
		name   string
		noSuch bool // ErrNoCommand, else another error
	}{
		{"missing", true}, {"", true}, {"../outside", true}, {"a/b", true}, {"team:..", true},
		{".hidden", true}, {"ok:", true},
		{"link", false}, {"sub:x", false}, {"dir", false}, {"big", false},
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

// TestExpandArgs: the placeholders as the CLI fills them (measured with
// TestRealCLIRepositoryCommands).
func TestExpandArgs(t *testing.T) {
	for _, tc := range []struct{ body, args, want string }{
		{"all=$ARGUMENTS", "a b", "all=a b"},
		{"$0 $1 $2", `"x y" 'z w' v\ u`, "x y z w v u"},
		{"$ARGUMENTS[1]", "a b", "b"},
		{"$5 $ARGUMENTS[5]", "a", "$5 $ARGUMENTS[5]"},
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
