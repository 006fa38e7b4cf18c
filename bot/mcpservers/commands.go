package mcpservers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
)

// Commands implements thread.Commander: `mcp`.
func (e *Extension) Commands() []thread.Command {
	return []thread.Command{{
		Name: "mcp", Who: thread.Admins,
		Usage: []string{"mcp", "mcp add <server>", "mcp remove <server>"},
		Help:  "the operator's MCP servers and plugins this channel's sessions get; admins give the channel one the bot's configuration offers, or take back one they gave",
		Max:   2, Valid: validMCPArgs, Run: thread.Bind((*part).cmdMCP), After: "push",
	}}
}

func validMCPArgs(args []string) bool {
	return len(args) == 0 || (len(args) == 2 && (args[0] == "add" || args[0] == "remove"))
}

func (p *part) cmdMCP(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 0 {
		p.t.Reply(ctx, p.listText(ctx))
		return
	}
	verb, name := args[0], args[1]
	if !p.t.IsAdmin(ev.User.ID) {
		p.t.Audit(ctx, ev.User.ID, "refused", "mcp "+verb, name, false)
		p.t.Tell(ctx, ev.User, "Only admins can change this channel's MCP servers.")
		return
	}
	s, ok := p.ext.cat.server(name)
	switch {
	case p.ext.channels == nil:
		p.t.Reply(ctx, "This bot keeps no channel's MCP servers: the operator's configuration alone gives them.")
	case verb == "add" && !ok:
		p.t.Reply(ctx, "There is no MCP server "+text.CodeSpan(name)+" in the bot's configuration (`mcp` lists them).")
	case verb == "remove" && ok && s.For(p.t.Ref().Channel, p.t.Ref().ChannelKey()):
		p.t.Reply(ctx, "The bot's configuration gives this channel "+text.CodeSpan(name)+": only the operator can take it back.")
	case verb == "remove" && ok && slices.Contains(p.setting().List(), name):
		p.t.Reply(ctx, "The channel's settings give this channel "+text.CodeSpan(name)+" ("+p.setting().Source.String()+"): change its `mcp` setting there.")
	case verb == "add":
		p.change(ctx, ev, verb, name, func(key string) (bool, error) {
			return p.ext.channels.AddChannelMCPServer(ctx, key, name, ev.User.ID, p.t.Now())
		})
	default:
		p.change(ctx, ev, verb, name, func(key string) (bool, error) {
			return p.ext.channels.RemoveChannelMCPServer(ctx, key, name)
		})
	}
}

// change makes an admin's change, audits it and says what it does.
func (p *part) change(ctx context.Context, ev adapters.Event, verb, name string, do func(key string) (bool, error)) {
	changed, err := do(p.t.Ref().ChannelKey())
	if err != nil {
		p.t.Reply(ctx, "Could not save: "+err.Error())
		return
	}
	p.t.Audit(ctx, ev.User.ID, "mcp "+verb, name, "", true)
	switch {
	case !changed && verb == "add":
		p.t.Reply(ctx, "This channel has "+text.CodeSpan(name)+" already.")
	case !changed:
		p.t.Reply(ctx, "This channel was not given "+text.CodeSpan(name)+" by an admin.")
	default:
		what := map[string]string{"add": "get", "remove": "no longer get"}[verb]
		p.t.Reply(ctx, fmt.Sprintf("Sessions of this channel started from now on %s the MCP server %s; a live one keeps what it started with until `new` (or it idles).", what, text.CodeSpan(name)))
	}
}

// listText says which servers the channel gets and why, which others an
// admin could give it, and the plugin directories.
func (p *part) listText(ctx context.Context) string {
	cat := p.ext.cat
	if len(cat.Servers) == 0 && len(cat.Plugins) == 0 {
		return "No MCP servers or plugins are configured for this bot."
	}
	ref, added, set := p.t.Ref(), p.added(ctx), p.setting()
	var got, others []string
	for _, s := range cat.Servers {
		switch {
		case s.For(ref.Channel, ref.ChannelKey()):
			got = append(got, text.CodeSpan(s.Name)+" (the bot's configuration)")
		case slices.Contains(added, s.Name):
			got = append(got, text.CodeSpan(s.Name)+" (given by an admin)")
		case slices.Contains(set.List(), s.Name):
			got = append(got, text.CodeSpan(s.Name)+" (the channel's settings: "+set.Source.String()+")")
		default:
			others = append(others, text.CodeSpan(s.Name))
		}
	}
	for _, n := range added {
		if _, ok := cat.server(n); !ok {
			got = append(got, text.CodeSpan(n)+" (given by an admin, no longer in the bot's configuration: not started)")
		}
	}
	for _, n := range set.List() {
		if _, ok := cat.server(n); !ok {
			got = append(got, text.CodeSpan(n)+" (named by the channel's settings, "+set.Source.String()+", but not in the bot's configuration: not started)")
		}
	}
	lines := []string{"MCP servers of this channel's sessions: none."}
	if len(got) > 0 {
		lines[0] = "MCP servers of this channel's sessions: " + strings.Join(got, ", ") + ". Each tool call of theirs is asked about like any tool."
	}
	if len(others) > 0 {
		lines = append(lines, "Others an admin can give it (`mcp add <server>`): "+strings.Join(others, ", ")+".")
	}
	if len(cat.Plugins) > 0 {
		lines = append(lines, pluginsText(p.plugins()))
	}
	return strings.Join(lines, "\n")
}

// server is the catalog's server of that name.
func (c *Catalog) server(name string) (Server, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// pluginsText says which of the operator's plugins the channel's sessions
// get, and what of them reaches Claude.
func pluginsText(given []Plugin) string {
	if len(given) == 0 {
		return "Plugins of this channel's sessions: none."
	}
	var names []string
	for _, pl := range given {
		names = append(names, text.CodeSpan(pl.Name))
	}
	return "Plugins of this channel's sessions (the bot's configuration): " + strings.Join(names, ", ") +
		". Claude may use their skills and agents (<plugin>:<name>); their hooks, MCP servers, programs and settings never run."
}
