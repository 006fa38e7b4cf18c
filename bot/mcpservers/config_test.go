package mcpservers

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoad: a good file loads, its secrets read from their files at
// Resolve; a bad one lists every problem at once.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	secret := write(t, dir, "token", "tok-1\n")
	good := `{"mcpServers": {
		"gh": {"command": "/usr/bin/gh-mcp", "args": ["stdio"], "env": {"GH_TOKEN": {"file": "` + secret + `"}, "MODE": "ro"}, "channels": ["C1"]},
		"docs": {"type": "http", "url": "https://docs.example/mcp", "headers": {"Authorization": {"file": "` + secret + `"}}, "channels": ["*"]},
		"spare": {"command": "spare-mcp"}
	}}`
	cat, err := Load(Config{ServersFile: write(t, dir, "good.json", good), PluginDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Server{}
	for _, s := range cat.Servers {
		byName[s.Name] = s
	}
	for _, tt := range []struct {
		name string
		want string
	}{
		{"gh", `{"args":["stdio"],"command":"/usr/bin/gh-mcp","env":{"GH_TOKEN":"tok-1","MODE":"ro"}}`},
		{"docs", `{"headers":{"Authorization":"tok-1"},"type":"http","url":"https://docs.example/mcp"}`},
		{"spare", `{"command":"spare-mcp"}`},
	} {
		got, err := byName[tt.name].Resolve()
		if err != nil || string(got) != tt.want {
			t.Errorf("%s resolves to %s (%v), want %s", tt.name, got, err, tt.want)
		}
	}
	if want := []Plugin{{Name: filepath.Base(dir), Dir: dir, Channels: []string{"*"}}}; !reflect.DeepEqual(cat.Plugins, want) {
		t.Errorf("plugins %+v, want %+v", cat.Plugins, want)
	}
	// A rotated secret is read at the next launch.
	write(t, dir, "token", "tok-2")
	if got, _ := byName["gh"].Resolve(); !strings.Contains(string(got), `"GH_TOKEN":"tok-2"`) {
		t.Errorf("after rotation: %s", got)
	}
	// A secret gone since start: the server cannot be resolved.
	os.Remove(secret)
	if _, err := byName["gh"].Resolve(); err == nil {
		t.Error("resolved without its secret")
	}
}

func TestLoadProblems(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		file    string
		plugins []string
		want    []string
	}{
		{"not json", `{`, nil, []string{"want {\"mcpServers\""}},
		{"unknown top-level key", `{"servers": {}}`, nil, []string{`unknown field "servers"`}},
		{"every problem of every server", `{"mcpServers": {
			"bad name!": {"command": "x"},
			"claudeops": {"command": "x"},
			"a": {"type": "sse", "url": "https://x"},
			"b": {"command": "", "url": "https://x", "args": "no"},
			"c": {"type": "http", "url": "ftp://x", "env": {}},
			"d": {"command": "x", "env": {"K": {"file": "relative"}, "L": 5, "M": {"file": "/nonexistent/secret"}}, "channels": []}
		}}`, []string{"relative", "/nonexistent"}, []string{
			`server "a": type "sse": want stdio or http`,
			`server "b": args: want a list of strings`,
			`server "b": command: want the program to run`,
			`server "b": url: not a field of a stdio server`,
			`server "bad name!": a name is letters`,
			`server "c": env: not a field of a http server`,
			`server "c": url: want the server's http or https URL`,
			`server "claudeops": the name is the bot's own server's`,
			`server "d": channels: want a list`,
			`server "d": env.K: want a string or {"file": "/abs/path"}`,
			`server "d": env.L: want a string`,
			`server "d": env.M: read the secret: open /nonexistent/secret`,
			`CLAUDEOPS_PLUGIN_DIRS: "relative" is not an absolute path`,
			`CLAUDEOPS_PLUGIN_DIRS: "/nonexistent" is not an absolute path`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Config{ServersFile: write(t, dir, "f.json", tt.file), PluginDirs: tt.plugins, Reserved: []string{"claudeops"}})
			if err == nil {
				t.Fatal("loaded")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("no problem says %q:\n%s", w, err)
				}
			}
		})
	}
}

// plugin writes a plugin directory named name (no manifest: "").
func plugin(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "p")
	if err := os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if name != "" {
		write(t, dir, ".claude-plugin/plugin.json", `{"name": "`+name+`"}`)
	}
	return dir
}

// TestLoadPlugins: the servers file's plugins section gives each plugin to
// its channels, CLAUDEOPS_PLUGIN_DIRS to every channel; each plugin's
// every problem is listed: a relative, missing or manifest-less directory,
// a bad or taken name, no channels, an unknown field.
func TestLoadPlugins(t *testing.T) {
	dir := t.TempDir()
	ops, all := plugin(t, "ops"), plugin(t, "everywhere")
	cat, err := Load(Config{PluginDirs: []string{all}, ServersFile: write(t, dir, "good.json",
		`{"plugins": [{"dir": "`+ops+`", "channels": ["C1", "matrix/!r:hs"]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := []Plugin{{Name: "everywhere", Dir: all, Channels: []string{"*"}}, {Name: "ops", Dir: ops, Channels: []string{"C1", "matrix/!r:hs"}}}
	if !reflect.DeepEqual(cat.Plugins, want) {
		t.Errorf("plugins %+v, want %+v", cat.Plugins, want)
	}
	if !cat.Plugins[1].For("!r:hs", "matrix/!r:hs") || cat.Plugins[1].For("C2", "slack/C2") {
		t.Error("ops given to the wrong channels")
	}
	bad := `{"plugins": [
		{"dir": "relative", "channels": ["*"]},
		{"dir": "/nonexistent", "channels": ["*"]},
		{"dir": "` + plugin(t, "") + `", "channels": ["*"]},
		{"dir": "` + plugin(t, "repo") + `", "channels": ["*"]},
		{"dir": "` + plugin(t, "bad name") + `", "channels": ["*"]},
		{"dir": "` + plugin(t, "everywhere") + `", "channels": ["*"]},
		{"dir": "` + ops + `"},
		{"dir": "` + ops + `", "channels": ["*"], "hooks": true}
	]}`
	_, err = Load(Config{PluginDirs: []string{all}, ServersFile: write(t, dir, "bad.json", bad)})
	wants := []string{"plugin 1 (relative): dir: want the absolute path", "plugin 2 (/nonexistent): dir: want",
		"plugin 3", "plugin.json: unreadable", "plugin 4", `the name "repo" is the repository's skills'`,
		"plugin 5", `name "bad name" is not a plugin's name`, "plugin 6", `a plugin named "everywhere" is given already`,
		"plugin 7", "channels: want a list", `plugin 8: want {"dir"`, `unknown field "hooks"`}
	if err == nil {
		t.Fatal("loaded")
	}
	if n := len(strings.Split(err.Error(), "\n")); n != 8 {
		t.Errorf("%d problems, want 8:\n%s", n, err)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("no problem says %q:\n%s", w, err)
		}
	}
}

// TestFor: a server is given to the channels it lists, by platform id or
// key, or to all with "*"; none without a list.
func TestFor(t *testing.T) {
	for _, tt := range []struct {
		channels []string
		want     bool
	}{
		{nil, false},
		{[]string{"C1"}, true},
		{[]string{"slack/C1"}, true},
		{[]string{"C2", "matrix/C1"}, false},
		{[]string{"*"}, true},
	} {
		if got := (Server{Channels: tt.channels}).For("C1", "slack/C1"); got != tt.want {
			t.Errorf("%v: For = %v, want %v", tt.channels, got, tt.want)
		}
	}
}
