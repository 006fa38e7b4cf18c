package mcpservers

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/store"
)

// TestMCPCommand: `mcp` in one channel, step by step over the real
// store: what it lists, who may change it, what each change does to the
// next launch, and what is audited.
func TestMCPCommand(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "servers.json", `{"mcpServers": {
		"ops": {"command": "/bin/ops", "channels": ["C1"]},
		"docs": {"type": "http", "url": "https://docs.example/mcp"},
		"spare": {"command": "/bin/spare"}
	}}`)
	cat, err := Load(Config{ServersFile: file})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(dir, "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ext := New(cat, st)
	ft := threadtest.New("t1", "alice")
	ft.Key = adapters.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1.0"}
	ft.Admins = []string{"W-admin"}
	ext.Init(ft)
	p := ext.Attach(ft).(*part)
	admin, bob := adapters.User{ID: "W-admin"}, adapters.User{ID: "U-bob"}
	for _, step := range []struct {
		user    adapters.User
		args    []string
		said    string
		audit   string
		servers string // the next launch's, sorted
	}{
		{bob, nil, "MCP servers of this channel's sessions: `ops` (the bot's configuration). Each tool call of theirs is asked about like any tool.\nOthers an admin can give it (`mcp add <server>`): `docs`, `spare`.", "", "ops"},
		{bob, []string{"add", "docs"}, "@U-bob Only admins can change this channel's MCP servers.", "U-bob refused mcp add docs false", "ops"},
		{admin, []string{"add", "nosuch"}, "There is no MCP server `nosuch` in the bot's configuration", "", "ops"},
		{admin, []string{"add", "docs"}, "Sessions of this channel started from now on get the MCP server `docs`", "W-admin mcp add docs  true", "docs ops"},
		{admin, []string{"add", "docs"}, "This channel has `docs` already.", "W-admin mcp add docs  true", "docs ops"},
		{bob, nil, "`docs` (given by an admin), `ops` (the bot's configuration)", "", "docs ops"},
		{admin, []string{"remove", "ops"}, "The bot's configuration gives this channel `ops`: only the operator can take it back.", "", "docs ops"},
		{admin, []string{"remove", "docs"}, "Sessions of this channel started from now on no longer get the MCP server `docs`", "W-admin mcp remove docs  true", "ops"},
		{admin, []string{"remove", "spare"}, "This channel was not given `spare` by an admin.", "W-admin mcp remove spare  true", "ops"},
	} {
		ft.Said, ft.Audits = nil, nil
		p.cmdMCP(context.Background(), adapters.Event{User: step.user}, step.args)
		said := strings.Join(ft.Said, "\n")
		if !strings.Contains(said, step.said) {
			t.Errorf("%s %v: said %q, want %q", step.user.ID, step.args, said, step.said)
		}
		if got := strings.Join(ft.Audits, "\n"); got != step.audit {
			t.Errorf("%s %v: audited %q, want %q", step.user.ID, step.args, got, step.audit)
		}
		var l thread.Launch
		p.BeforeLaunch(context.Background(), &l)
		var names []string
		for n := range l.MCPServers {
			names = append(names, n)
		}
		slices.Sort(names)
		if got := strings.Join(names, " "); got != step.servers {
			t.Errorf("%s %v: the next launch gets %q, want %q", step.user.ID, step.args, got, step.servers)
		}
	}
	// Another channel has none of this one's.
	other := threadtest.New("t2", "alice")
	other.Key = adapters.ThreadRef{Platform: "slack", Channel: "C2", Thread: "2.0"}
	var l thread.Launch
	ext.Attach(other).(*part).BeforeLaunch(context.Background(), &l)
	if l.MCPServers != nil {
		t.Errorf("channel C2 got %v", l.MCPServers)
	}
}

// TestMCPListsPlugins: `mcp` names the plugins the channel's sessions get
// (the file's for its channels, CLAUDEOPS_PLUGIN_DIRS' for all) and no
// other channel's.
func TestMCPListsPlugins(t *testing.T) {
	all, ops := plugin(t, "everywhere"), plugin(t, "opsplug")
	file := write(t, t.TempDir(), "servers.json", `{"plugins": [{"dir": "`+ops+`", "channels": ["C1"]}]}`)
	cat, err := Load(Config{ServersFile: file, PluginDirs: []string{all}})
	if err != nil {
		t.Fatal(err)
	}
	ext := New(cat, nil)
	for _, tt := range []struct{ channel, want string }{
		{"C1", "Plugins of this channel's sessions (the bot's configuration): `everywhere`, `opsplug`. Claude may use their skills and agents"},
		{"C2", "Plugins of this channel's sessions (the bot's configuration): `everywhere`. Claude"},
	} {
		ft := threadtest.New("t1", "alice")
		ft.Key = adapters.ThreadRef{Platform: "slack", Channel: tt.channel, Thread: "1.0"}
		ext.Init(ft)
		ext.Attach(ft).(*part).cmdMCP(context.Background(), adapters.Event{User: adapters.User{ID: "U-bob"}}, nil)
		if said := strings.Join(ft.Said, "\n"); !strings.Contains(said, tt.want) {
			t.Errorf("%s: said %q, want %q", tt.channel, said, tt.want)
		}
	}
}
