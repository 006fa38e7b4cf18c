package mcpservers

import (
	"context"
	"encoding/json"

	"github.com/claudeops/claudeops/bot/thread"
)

// Extension gives each channel's sessions its servers and the plugin
// directories.
type Extension struct {
	cat *Catalog
	h   thread.Host
}

// New makes the extension of a checked catalog (Load).
func New(cat *Catalog) *Extension {
	if cat == nil {
		cat = &Catalog{}
	}
	return &Extension{cat: cat}
}

// Name implements thread.Extension.
func (*Extension) Name() string { return "mcpservers" }

// Init implements thread.Extension.
func (e *Extension) Init(h thread.Host) { e.h = h }

// Attach implements thread.Extension: a part only where there is
// something to give.
func (e *Extension) Attach(t thread.Thread) any {
	if len(e.cat.Servers) == 0 && len(e.cat.PluginDirs) == 0 {
		return nil
	}
	return &part{cat: e.cat, t: t}
}

type part struct {
	cat *Catalog
	t   thread.Thread
}

// BeforeLaunch implements thread.Launcher: the channel's servers, their
// secrets read now, and the plugin directories. A server whose secret
// cannot be read is left out, and the thread told.
func (p *part) BeforeLaunch(ctx context.Context, l *thread.Launch) {
	ref := p.t.Ref()
	for _, s := range p.cat.Servers {
		if !s.For(ref.Channel, ref.ChannelKey()) {
			continue
		}
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
	l.PluginDirs = append(l.PluginDirs, p.cat.PluginDirs...)
}
