package mcpservers

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/settings"
)

// TestMCPSetting: the channel's `mcp` setting gives its sessions those of
// the file's servers, added to what the file and admins give; another
// channel gets none of them; a name the file does not offer is skipped,
// and `mcp` says so and where each comes from.
func TestMCPSetting(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "servers.json", `{"mcpServers": {
		"ops": {"command": "/bin/ops", "channels": ["C-ops"]},
		"sentry": {"command": "/bin/sentry"},
		"docs": {"command": "/bin/docs"}
	}}`)
	cat, err := Load(Config{ServersFile: file})
	if err != nil {
		t.Fatal(err)
	}
	r := settings.New(settings.Layer{}, []string{"root"})
	a := settings.Where{Platform: "slack", Channel: "CA"}
	r.SetChat(a, settings.Scope{Level: settings.LevelChannel, Key: a.ChannelKey()}, settings.MCP, "sentry,nosuch", "root", time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	for _, tt := range []struct {
		channel string
		servers []string
		list    []string // in what `mcp` says
	}{
		{channel: "CA", servers: []string{"sentry"}, list: []string{
			"`sentry` (the channel's settings: channel slack/CA, set in chat by root on 2026-11-29 12:00 UTC)",
			"`nosuch` (named by the channel's settings, channel slack/CA, set in chat by root on 2026-11-29 12:00 UTC, but not in the bot's configuration: not started)",
			"Others an admin can give it (`mcp add <server>`): `docs`, `ops`."}},
		{channel: "CB", list: []string{"MCP servers of this channel's sessions: none."}},
		{channel: "C-ops", servers: []string{"ops"}, list: []string{"`ops` (the bot's configuration)"}},
	} {
		t.Run(tt.channel, func(t *testing.T) {
			ft := threadtest.New("t1", "alice")
			ft.Key = adapters.ThreadRef{Platform: "slack", Channel: tt.channel, Thread: "1.2"}
			ft.Resolver = r
			ext := New(cat, nil)
			part := ext.Attach(ft).(*part)
			var l thread.Launch
			part.BeforeLaunch(context.Background(), &l)
			var got []string
			for n := range l.MCPServers {
				got = append(got, n)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.servers) {
				t.Errorf("servers %v, want %v", got, tt.servers)
			}
			said := part.listText(context.Background())
			for _, w := range tt.list {
				if !strings.Contains(said, w) {
					t.Errorf("mcp says %q, want %q in it", said, w)
				}
			}
		})
	}
}

// TestCheckNames: chat may name only the file's servers.
func TestCheckNames(t *testing.T) {
	file := write(t, t.TempDir(), "servers.json", `{"mcpServers": {"sentry": {"command": "/bin/sentry"}, "docs": {"command": "/bin/docs"}}}`)
	cat, err := Load(Config{ServersFile: file})
	if err != nil {
		t.Fatal(err)
	}
	e := New(cat, nil)
	if err := e.CheckNames("sentry,docs"); err != nil {
		t.Error(err)
	}
	if err := e.CheckNames("sentry,nosuch"); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("an unknown server: %v", err)
	}
}
