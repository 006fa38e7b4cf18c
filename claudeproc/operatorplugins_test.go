package claudeproc

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPluginName: a plugin's name is its manifest's; without a manifest
// PluginName refuses it and DirPluginName takes the directory's name, as
// the CLI does; a bad name or the repository's ("repo") is refused by both.
func TestPluginName(t *testing.T) {
	for _, tt := range []struct {
		name, manifest, want, wantDir string
	}{
		{"named", `{"name": "opsplug"}`, "opsplug", "opsplug"},
		{"no manifest", "", "", "dir"},
		{"bad json", `{`, "", ""},
		{"bad name", `{"name": "a b"}`, "", ""},
		{"the repository's", `{"name": "repo"}`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dir")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.manifest != "" {
				writeTree(t, dir, map[string]string{pluginManifest: tt.manifest})
			}
			got, err := PluginName(dir)
			if got != tt.want || (err == nil) != (tt.want != "") {
				t.Errorf("PluginName = %q, %v; want %q", got, err, tt.want)
			}
			got, err = DirPluginName(dir)
			if got != tt.wantDir || (err == nil) != (tt.wantDir != "") {
				t.Errorf("DirPluginName = %q, %v; want %q", got, err, tt.wantDir)
			}
		})
	}
}

// TestPluginSkillsBuilt: a guarded session without a working directory
// still gets its plugins' skills, built under each plugin's name with only
// their describing keys (disable-model-invocation left out), and their
// agents as <plugin>:<agent>; the built directory is mounted read-only and
// the plugin's own directory is no argument.
func TestPluginSkillsBuilt(t *testing.T) {
	named, bare := t.TempDir(), filepath.Join(t.TempDir(), "bare")
	writeTree(t, named, map[string]string{
		pluginManifest:           `{"name": "opsplug"}`,
		"skills/notes/SKILL.md":  "---\nname: notes\ndescription: Notes\nallowed-tools: Bash\nhooks: {}\n---\nBody\n",
		"skills/hidden/SKILL.md": "---\nname: hidden\ndescription: H\ndisable-model-invocation: true\n---\nH\n",
		"agents/deployer.md":     "---\nname: deployer\ndescription: Deploys\npermissionMode: bypassPermissions\n---\nYou deploy.\n",
	})
	writeTree(t, bare, map[string]string{"skills/lint/SKILL.md": "---\nname: lint\ndescription: Lints\n---\nLint.\n"})
	o := Options{Guard: &Guard{}, SkillsBase: t.TempDir(), PluginDirs: []string{named, bare}}
	o.loadAgents(slog.New(slog.DiscardHandler))
	o.loadSkills(slog.New(slog.DiscardHandler), Local{})
	t.Cleanup(func() { o.removeSkills(slog.New(slog.DiscardHandler)) })
	if want := []string{"opsplug:notes", "bare:lint"}; !slices.Equal(o.skills, want) {
		t.Errorf("skills %v, want %v", o.skills, want)
	}
	if !strings.Contains(o.agents, `"opsplug:deployer"`) || strings.Contains(o.agents, "bypass") {
		t.Errorf("agents %s", o.agents)
	}
	b, err := os.ReadFile(filepath.Join(o.builtPlugins[0], "skills/notes/SKILL.md"))
	if err != nil || strings.Contains(string(b), "allowed-tools") || strings.Contains(string(b), "hooks") {
		t.Errorf("built skill %q (%v)", b, err)
	}
	args := strings.Join(o.Args(), " ")
	if strings.Contains(args, named) || strings.Contains(args, bare) || !strings.Contains(args, "--plugin-dir "+o.builtPlugins[1]) {
		t.Errorf("args %s", args)
	}
	if len(o.Mounts) != 1 || o.Mounts[0].Path != o.skillsDir || o.Mounts[0].Access != ReadOnly {
		t.Errorf("mounts %+v", o.Mounts)
	}
}
