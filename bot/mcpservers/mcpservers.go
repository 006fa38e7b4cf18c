package mcpservers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
)

// Extension gives each channel's sessions its servers and the plugin
// directories.
type Extension struct {
	cat      *Catalog
	channels Channels
}

// Channels keeps which of the catalog's servers admins gave which
// channels (`mcp add`), by channel key; *store.Store is one. Names come
// back sorted; added and removed say whether anything changed.
type Channels interface {
	ChannelMCPServers(ctx context.Context, key string) ([]string, error)
	AddChannelMCPServer(ctx context.Context, key, name, by string, at time.Time) (added bool, err error)
	RemoveChannelMCPServer(ctx context.Context, key, name string) (removed bool, err error)
}

// New makes the extension of a checked catalog (Load; nil: none) and
// the channels' own choices (nil: the file's alone, no `mcp add`).
func New(cat *Catalog, channels Channels) *Extension {
	if cat == nil {
		cat = &Catalog{}
	}
	return &Extension{cat: cat, channels: channels}
}

// Name implements thread.Extension.
func (*Extension) Name() string { return "mcpservers" }

// Init implements thread.Extension: a part needs only its thread.
func (*Extension) Init(thread.Host) {}

// Attach implements thread.Extension: every thread has a part, for the
// `mcp` command.
func (e *Extension) Attach(t thread.Thread) any { return &part{ext: e, t: t} }

type part struct {
	ext *Extension
	t   thread.Thread
}

// BeforeLaunch implements thread.Launcher: the channel's servers, their
// secrets read now, and its plugin directories; nothing for a channel
// given none. A server whose secret cannot be read is left out, and the
// thread told.
func (p *part) BeforeLaunch(ctx context.Context, l *thread.Launch) {
	for _, s := range p.given(ctx) {
		cfg, err := s.Resolve()
		if err != nil {
			p.t.Log().Error("mcp server left out", "server", s.Name, "err", err)
			p.t.Notice(ctx, "The MCP server "+s.Name+" is not available in this session: its secret could not be read (the operator's log says why).", true)
			continue
		}
		if l.MCPServers == nil {
			l.MCPServers = map[string]json.RawMessage{}
		}
		l.MCPServers[s.Name] = cfg
	}
	for _, pl := range p.plugins() {
		l.PluginDirs = append(l.PluginDirs, pl.Dir)
	}
}

// plugins are the plugins the thread's channel gets (the file's channels,
// CLAUDEOPS_PLUGIN_DIRS: every channel).
func (p *part) plugins() []Plugin {
	ref := p.t.Ref()
	var out []Plugin
	for _, pl := range p.ext.cat.Plugins {
		if pl.For(ref.Channel, ref.ChannelKey()) {
			out = append(out, pl)
		}
	}
	return out
}

// given are the servers the thread's channel gets: by the file's
// channels, by an admin (`mcp add`), or by the channel's `mcp` setting
// (package settings) — each adds, none takes away what another gives. A
// name the setting gives that the file does not offer is skipped, logged
// (and said by `mcp`).
func (p *part) given(ctx context.Context) []Server {
	if len(p.ext.cat.Servers) == 0 {
		return nil
	}
	ref := p.t.Ref()
	added, set := p.added(ctx), p.setting()
	var out []Server
	for _, s := range p.ext.cat.Servers {
		if s.For(ref.Channel, ref.ChannelKey()) || slices.Contains(added, s.Name) || slices.Contains(set.List(), s.Name) {
			out = append(out, s)
		}
	}
	for _, n := range set.List() {
		if _, ok := p.ext.cat.server(n); !ok {
			p.t.Log().Warn("mcp server named by the channel's settings is not in the servers file; skipped", "server", n, "from", set.Source.String())
		}
	}
	return out
}

// CheckNames refuses a value of the mcp setting (names, comma-joined)
// naming a server the servers file does not list: for
// settings.Resolver.Check, so that chat cannot set one.
func (e *Extension) CheckNames(value string) error {
	for _, n := range strings.Split(value, ",") {
		if _, ok := e.cat.server(n); !ok {
			return fmt.Errorf("there is no MCP server %q in the bot's configuration (`mcp` lists them)", n)
		}
	}
	return nil
}

// setting is the channel's `mcp` setting: the names it gives, and where
// from.
func (p *part) setting() settings.Value {
	return p.t.Scopes().Get(thread.Where(p.t.Ref()), settings.MCP)
}

// added are the names admins gave the channel; none when the store
// cannot say (logged: the file's servers still come).
func (p *part) added(ctx context.Context) []string {
	if p.ext.channels == nil {
		return nil
	}
	names, err := p.ext.channels.ChannelMCPServers(ctx, p.t.Ref().ChannelKey())
	if err != nil {
		p.t.Log().Error("read the channel's mcp servers", "err", err)
	}
	return names
}
