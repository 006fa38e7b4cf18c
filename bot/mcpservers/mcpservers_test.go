package mcpservers

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
)

// TestBeforeLaunch: a session gets its channel's servers, secrets read,
// and its plugin directories (the file's for its channels,
// CLAUDEOPS_PLUGIN_DIRS' for all); a channel given none launches as before; a
// server whose secret is gone is left out and the thread told.
func TestBeforeLaunch(t *testing.T) {
	dir := t.TempDir()
	secret := write(t, dir, "token", "tok")
	plug := plugin(t, "ops")
	file := write(t, dir, "servers.json", `{"mcpServers": {
		"ops": {"command": "/bin/ops", "env": {"T": {"file": "`+secret+`"}}, "channels": ["C1"]},
		"all": {"type": "http", "url": "https://x", "channels": ["*"]},
		"docs": {"command": "/bin/docs", "channels": ["matrix/!room:hs"]}
	}, "plugins": [{"dir": "`+plug+`", "channels": ["C1"]}]}`)
	for _, tt := range []struct {
		name       string
		plugins    []string
		file       string
		ref        adapters.ThreadRef
		servers    []string
		plugDirs   []string
		dropSecret bool
		told       bool
	}{
		{name: "nothing configured", ref: adapters.ThreadRef{Platform: "slack", Channel: "C1"}},
		{name: "slack channel", file: file, ref: adapters.ThreadRef{Platform: "slack", Channel: "C1"}, servers: []string{"all", "ops"}, plugDirs: []string{plug}},
		{name: "slack channel and every channel's plugin", file: file, plugins: []string{dir}, ref: adapters.ThreadRef{Platform: "slack", Channel: "C1"}, servers: []string{"all", "ops"}, plugDirs: []string{dir, plug}},
		{name: "matrix room by key", file: file, ref: adapters.ThreadRef{Platform: "matrix", Channel: "!room:hs"}, servers: []string{"all", "docs"}},
		{name: "plugins only", plugins: []string{dir}, ref: adapters.ThreadRef{Platform: "slack", Channel: "C9"}, plugDirs: []string{dir}},
		{name: "secret gone", file: file, ref: adapters.ThreadRef{Platform: "slack", Channel: "C1"}, servers: []string{"all"}, plugDirs: []string{plug}, dropSecret: true, told: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			write(t, dir, "token", "tok")
			cat, err := Load(Config{ServersFile: tt.file, PluginDirs: tt.plugins})
			if err != nil {
				t.Fatal(err)
			}
			ft := threadtest.New("t1", "alice")
			ft.Key = tt.ref
			ext := New(cat, nil)
			ext.Init(ft)
			part := ext.Attach(ft)
			if tt.dropSecret {
				os.Remove(filepath.Join(dir, "token"))
			}
			var l thread.Launch
			part.(thread.Launcher).BeforeLaunch(context.Background(), &l)
			var got []string
			for n := range l.MCPServers {
				got = append(got, n)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.servers) || !reflect.DeepEqual(l.PluginDirs, tt.plugDirs) || (tt.servers == nil && l.MCPServers != nil) {
				t.Errorf("servers %v, plugins %v; want %v, %v", got, l.PluginDirs, tt.servers, tt.plugDirs)
			}
			if s, ok := l.MCPServers["ops"]; ok && !strings.Contains(string(s), `"T":"tok"`) {
				t.Errorf("ops without its secret: %s", s)
			}
			if said := strings.Join(ft.Said, "\n"); strings.Contains(said, "ops is not available") != tt.told || strings.Contains(said, "tok") {
				t.Errorf("the thread was told %q", said)
			}
		})
	}
}
