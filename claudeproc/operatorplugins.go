package claudeproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// The operator's plugins (Options.PluginDirs) reach a guarded session as
// the repository's skills and agents do, never as a --plugin-dir of their
// own: given whole, a plugin's hooks (hooks/hooks.json), MCP servers
// (.mcp.json), bin/ on the Bash tool's PATH, settings.json, output styles,
// LSP servers and monitors would take effect, and its skills' allowed-tools
// would let the model's next calls run unasked. So each plugin's skills
// (skills/<name>/SKILL.md) are built, only their describing keys, into a
// plugin of the same name beside the repository's (the model sees
// <plugin>:<skill>), and its agents (agents/*.md) are read as the
// repository's are and passed with --agents as <plugin>:<agent>. Its
// commands (commands/*.md) are not offered, to the model or from chat.

const pluginManifest = ".claude-plugin/plugin.json"

// PluginName is the name the plugin at dir gives itself in
// .claude-plugin/plugin.json; err when there is none (it wraps
// fs.ErrNotExist), or it is not a plugin's name or is the repository's
// (SkillsPlugin).
func PluginName(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("open the plugin: %w", err)
	}
	defer root.Close()
	b, err := readRepoFile(root, pluginManifest, maxSkillFile)
	if err != nil {
		return "", fmt.Errorf("%s: %w", pluginManifest, err)
	}
	var m struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("%s: %w", pluginManifest, err)
	}
	return checkPluginName(m.Name)
}

// DirPluginName is the name the CLI gives the plugin at dir: its
// manifest's, or without a manifest the directory's base name.
func DirPluginName(dir string) (string, error) {
	name, err := PluginName(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return checkPluginName(filepath.Base(dir))
	}
	return name, err
}

func checkPluginName(name string) (string, error) {
	switch {
	case !commandName.MatchString(name):
		return "", fmt.Errorf("%s: name %q is not a plugin's name (letters, digits, _ . -)", pluginManifest, name)
	case name == SkillsPlugin:
		return "", fmt.Errorf("%s: the name %q is the repository's skills'", pluginManifest, name)
	}
	return name, nil
}

// buildPluginSkills builds each operator plugin's skills in a directory of
// dest, under the plugin's name; a plugin without a name is left out.
func (o *Options) buildPluginSkills(log *slog.Logger, dest string) {
	for i, d := range o.PluginDirs {
		name, err := DirPluginName(d)
		if err != nil {
			log.Warn("plugin left out", "dir", d, "err", err)
			continue
		}
		out := filepath.Join(dest, fmt.Sprintf("plugin-%d", i))
		names, skipped, err := buildSkills(d, "skills", out, name, "The operator's plugin "+name+"'s skills, as the bot read them")
		if err != nil || len(skipped) > 0 {
			log.Warn("plugin skills left out", "plugin", name, "skipped", skipped, "err", err)
		}
		o.addBuilt(out, name, names)
	}
}

// pluginAgents are the operator plugins' agents, each <plugin>:<agent>.
func (o *Options) pluginAgents(log *slog.Logger) map[string]repoAgent {
	all := map[string]repoAgent{}
	for _, d := range o.PluginDirs {
		name, err := DirPluginName(d)
		if err != nil {
			log.Warn("plugin left out", "dir", d, "err", err)
			continue
		}
		agents, skipped, err := readAgents(d, "agents", name+":")
		if err != nil || len(skipped) > 0 {
			log.Warn("plugin agents left out", "plugin", name, "skipped", skipped, "err", err)
		}
		for k, a := range agents {
			all[k] = a
		}
	}
	return all
}
