package mcpservers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/claudeops/claudeops/claudeproc"
)

// Plugin is one of the operator's plugin directories and the channels that
// get it ("*": all).
type Plugin struct {
	Name     string
	Dir      string
	Channels []string
}

// For reports whether the plugin is given to the channel, as Server.For.
func (p Plugin) For(channel, key string) bool {
	return Server{Channels: p.Channels}.For(channel, key)
}

// envPlugins are CLAUDEOPS_PLUGIN_DIRS' directories, each for every
// channel. A directory without a manifest is taken, as before the file's
// plugins section, under its own base name.
func envPlugins(dirs []string) ([]Plugin, []string) {
	var out []Plugin
	var bad []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); !filepath.IsAbs(d) || err != nil || !fi.IsDir() {
			bad = append(bad, fmt.Sprintf("CLAUDEOPS_PLUGIN_DIRS: %q is not an absolute path of a directory", d))
			continue
		}
		name, err := claudeproc.DirPluginName(d)
		if err != nil {
			bad = append(bad, fmt.Sprintf("CLAUDEOPS_PLUGIN_DIRS: %q: %v", d, err))
			continue
		}
		out = append(out, Plugin{Name: name, Dir: d, Channels: []string{"*"}})
	}
	return out, bad
}

// filePlugins checks the servers file's plugins section: each an absolute
// directory with a readable .claude-plugin/plugin.json naming it, and its
// channels; every problem is listed.
func filePlugins(raw []json.RawMessage, taken []Plugin) ([]Plugin, []string) {
	out := slices.Clone(taken)
	var bad []string
	for i, r := range raw {
		var p Plugin
		var f struct {
			Dir      string   `json:"dir"`
			Channels []string `json:"channels"`
		}
		if err := strictJSON(r, &f); err != nil {
			bad = append(bad, fmt.Sprintf(`plugin %d: want {"dir": "/abs/path", "channels": [...]}: %v`, i+1, err))
			continue
		}
		p.Dir, p.Channels = f.Dir, f.Channels
		var problems []string
		if len(p.Channels) == 0 || slices.Contains(p.Channels, "") {
			problems = append(problems, `channels: want a list of channel or room ids, or ["*"] for all`)
		}
		if fi, err := os.Stat(p.Dir); !filepath.IsAbs(p.Dir) || err != nil || !fi.IsDir() {
			problems = append(problems, "dir: want the absolute path of a readable directory")
		} else if p.Name, err = claudeproc.PluginName(p.Dir); err != nil {
			problems = append(problems, "dir: "+err.Error())
		} else if slices.ContainsFunc(out, func(q Plugin) bool { return q.Name == p.Name }) {
			problems = append(problems, fmt.Sprintf("dir: a plugin named %q is given already", p.Name))
		}
		for _, pr := range problems {
			bad = append(bad, fmt.Sprintf("plugin %d (%s): %s", i+1, p.Dir, pr))
		}
		if len(problems) == 0 {
			out = append(out, p)
		}
	}
	return out[len(taken):], bad
}

// strictJSON decodes raw into v, refusing a field v does not have.
func strictJSON(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
