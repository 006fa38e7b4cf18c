package claudeproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The repository's skills (.claude/skills/<name>/SKILL.md) reach the model
// of a guarded session as a plugin the process builds of them: --restricted
// loads no skill of the working directory, and a --plugin-dir gives the
// model the Skill tool's listing (each named repo:<name>, the CLI's name for
// a plugin's skill). Only what describes a skill passes: each SKILL.md is
// written again with its name, description, argument-hint and when_to_use,
// and its body; allowed-tools (which let the model's next calls run without
// the host: measured), hooks, model, context, agent and every other key are
// left out, and a skill marked disable-model-invocation is not built. The
// body's !`command` lines stay text (disableSkillShellExecution in the
// guard's settings). The skill's other files are not copied: its body names
// them, and the model reads them in the working directory as any file.
//
// The plugin lives in a directory of its own below Options.SkillsBase,
// never in the working directory; a runner that isolates the session shows
// it read-only (a Mount), and it is removed when the process has ended. The
// process answers the model's Skill calls itself (skillcalls.go): one of
// these skills is allowed, since it only loads text the repository already
// shows the model; any other (bundled, an unknown name) is refused.

const (
	// SkillsPlugin is the name the built plugin has: the model sees the
	// skills as SkillsPlugin:<name>.
	SkillsPlugin  = "repo"
	maxSkillFile  = 32 << 10
	maxSkills     = 64
	maxSkillsSize = 256 << 10
	// maxSkillEntries bounds the entries of .claude/skills looked at.
	maxSkillEntries = 1024
)

// repoSkill is a skill as the plugin holds it.
type repoSkill struct {
	front skillFront
	body  []byte
}

// skillFront are the keys of a SKILL.md that pass: they only describe it.
type skillFront struct {
	Name         string `yaml:"name"`
	Description  string `yaml:"description,omitempty"`
	ArgumentHint string `yaml:"argument-hint,omitempty"`
	WhenToUse    string `yaml:"when_to_use,omitempty"`
}

// RepoSkills reads the skills of the repository at dir and writes them as
// a plugin in dest (which must exist and be empty): dest/.claude-plugin/
// plugin.json and dest/skills/<name>/SKILL.md. It returns the names built
// and the entries left out, with why; err only when dir cannot be opened
// or dest not written. Files are read through os.Root: a link leading out
// of dir is not followed.
func RepoSkills(dir, dest string) (names, skipped []string, err error) {
	return buildSkills(dir, skillsDir, dest, SkillsPlugin, "The repository's skills, as the bot read them")
}

// buildSkills reads the skills below sub of dir and writes them in dest
// as the plugin name.
func buildSkills(dir, sub, dest, plugin, about string) (names, skipped []string, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s for its skills: %w", dir, err)
	}
	defer root.Close()
	ents, err := fs.ReadDir(root.FS(), sub)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil: // a skills directory leading out of dir, say
		return nil, []string{sub + ": " + err.Error()}, nil
	}
	if len(ents) > maxSkillEntries {
		skipped = append(skipped, fmt.Sprintf("%s: %d entries, only the first %d read", sub, len(ents), maxSkillEntries))
		ents = ents[:maxSkillEntries]
	}
	skills := map[string]repoSkill{}
	total := 0
	for _, e := range ents {
		name := e.Name()
		s, why := readSkill(root, sub, name)
		switch {
		case why == "":
		case why == "-":
			continue // not a skill for the model, as the CLI would not offer it
		default:
			skipped = append(skipped, name+": "+why)
			continue
		}
		if total += len(s.body); len(skills) >= maxSkills || total > maxSkillsSize {
			skipped = append(skipped, name+": over the bound of skills")
			continue
		}
		skills[name] = s
	}
	if len(skills) == 0 {
		return nil, skipped, nil
	}
	if err := writeSkills(dest, plugin, about, skills); err != nil {
		return nil, skipped, err
	}
	for n := range skills {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, skipped, nil
}

// readSkill reads the skill in <sub>/<name>: what passes of it,
// or why it is left out ("-": a skill the model is not to call).
func readSkill(root *os.Root, sub, name string) (repoSkill, string) {
	if !commandName.MatchString(name) {
		return repoSkill{}, "not a skill's name"
	}
	b, err := readRepoFile(root, sub+"/"+name+"/SKILL.md", maxSkillFile)
	if errors.Is(err, fs.ErrNotExist) {
		return repoSkill{}, "-"
	}
	if err != nil {
		return repoSkill{}, err.Error()
	}
	front, body, ok := splitFrontMatter(b)
	if !ok {
		return repoSkill{front: skillFront{Name: name}, body: b}, ""
	}
	var fm struct {
		skillFront             `yaml:",inline"`
		DisableModelInvocation any `yaml:"disable-model-invocation"`
	}
	if err := yaml.Unmarshal(front, &fm); err != nil {
		return repoSkill{}, "bad front matter"
	}
	if v := fm.DisableModelInvocation; v == true || v == "true" {
		return repoSkill{}, "-"
	}
	// The directory names it, as the Skill call must; each value is one
	// line, so that no value can end the front matter or start a key.
	f := fm.skillFront
	f.Name, f.Description, f.ArgumentHint, f.WhenToUse = name, oneLine(f.Description), oneLine(f.ArgumentHint), oneLine(f.WhenToUse)
	return repoSkill{front: f, body: body}, ""
}

// oneLine is s with every run of white space, line ends included, one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// writeSkills writes the plugin of skills in dest.
func writeSkills(dest, plugin, about string, skills map[string]repoSkill) error {
	n, _ := json.Marshal(plugin) // strings: cannot fail
	a, _ := json.Marshal(about)
	files := map[string][]byte{".claude-plugin/plugin.json": []byte(`{"name": ` + string(n) + `, "description": ` + string(a) + "}\n")}
	for name, s := range skills {
		front, err := yaml.Marshal(s.front)
		if err != nil {
			return fmt.Errorf("write skill %s: %w", name, err)
		}
		files["skills/"+name+"/SKILL.md"] = slices.Concat([]byte("---\n"), front, []byte("---\n"), s.body)
	}
	for rel, b := range files {
		p := filepath.Join(dest, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write the repository's skills: %w", err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("write the repository's skills: %w", err)
		}
	}
	return nil
}

// A MountChecker is a runner that can show a session only some of the
// host's directories as Mounts: CanMount reports whether it can show dir.
// A runner that is not one shows any (Local sees all; docker binds any).
type MountChecker interface {
	CanMount(dir string) bool
}

// loadSkills builds a guarded session's skills below SkillsBase, where
// runner can show them, and adds the directory to the session's mounts:
// the repository's as the plugin repo, each operator plugin's under its
// own name (operatorplugins.go). Nothing is built (and the Skill tool
// stays off) without a base or a skill, or where the runner cannot show
// the base.
func (o *Options) loadSkills(log *slog.Logger, runner Runner) {
	if o.Guard == nil || o.SkillsBase == "" || (o.Dir == "" && len(o.PluginDirs) == 0) {
		return
	}
	if err := os.MkdirAll(o.SkillsBase, 0o755); err != nil {
		log.Warn("skills not offered", "err", err)
		return
	}
	if mc, ok := runner.(MountChecker); ok && !mc.CanMount(o.SkillsBase) {
		log.Info("skills not offered: the runner cannot show their directory", "dir", o.SkillsBase)
		return
	}
	dest, err := os.MkdirTemp(o.SkillsBase, "skills-")
	if err == nil {
		err = os.Chmod(dest, 0o755) // read by the session's user in a container
	}
	if err != nil {
		log.Warn("skills not offered", "err", err)
		return
	}
	o.skillsDir = dest
	if o.Dir != "" {
		names, skipped, err := RepoSkills(o.Dir, filepath.Join(dest, SkillsPlugin))
		if err != nil || len(skipped) > 0 {
			log.Warn("repository skills left out", "dir", o.Dir, "skipped", skipped, "err", err)
		}
		o.addBuilt(filepath.Join(dest, SkillsPlugin), SkillsPlugin, names)
	}
	o.buildPluginSkills(log, dest)
	if len(o.skills) == 0 {
		_ = os.RemoveAll(dest)
		o.skillsDir = ""
		return
	}
	o.Mounts = append(slices.Clone(o.Mounts), Mount{Path: dest, Access: ReadOnly})
}

// addBuilt records a plugin built in dir, of the skills names.
func (o *Options) addBuilt(dir, plugin string, names []string) {
	if len(names) == 0 {
		return
	}
	o.builtPlugins = append(o.builtPlugins, dir)
	for _, n := range names {
		o.skills = append(o.skills, plugin+":"+n)
	}
}

// removeSkills removes the built skills once the process has ended.
func (o *Options) removeSkills(log *slog.Logger) {
	if o.skillsDir == "" {
		return
	}
	if err := os.RemoveAll(o.skillsDir); err != nil {
		log.Warn("remove the built repository skills", "dir", o.skillsDir, "err", err)
	}
}

// offersSkill reports whether name, as the model's Skill call gives it, is
// one of the skills built for this process (<plugin>:<name>).
func (o *Options) offersSkill(name string) bool {
	return slices.Contains(o.skills, name)
}
