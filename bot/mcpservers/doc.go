// Package mcpservers is the extension that gives a channel's sessions the
// MCP servers and plugin directories the operator chose for it.
//
// The operator lists servers in a file (Config.ServersFile) in the CLI's
// own mcpServers shape (stdio: command, args, env; http: url, headers),
// each with the channels that get it ("channels": platform channel or
// room ids, or "*"); an admin may give a channel more of the file's
// servers with the `mcp` command, kept in the store (Channels), never a
// server the file does not offer. The channel's `mcp` setting (package
// settings, through Host.Scopes: the settings file or a bot admin in chat)
// names more of the file's servers; the three add up, none takes away what
// another gives. A name the setting gives that the file does not offer is
// skipped at launch with a log line, and `mcp` says so. A value of env or headers is a string or
// {"file": "/abs/path"}: the secret is read from that file (trailing
// newlines dropped) at every launch, so a rotated secret takes effect at
// the next session. Load checks the whole file at start and lists every
// problem at once. The file's "plugins" section gives the operator's
// plugin directories to channels the same way (each {"dir": "/abs/path",
// "channels": […]}; a directory without .claude-plugin/plugin.json naming
// it is refused); Config.PluginDirs (CLAUDEOPS_PLUGIN_DIRS) go to every
// channel. A guarded session never gets a plugin directory whole:
// claudeproc builds its skills and reads its agents (operatorplugins.go).
//
// At launch (thread.Launcher) the part hands the channel's servers, with
// their secrets, to claudeproc (Options.MCPServers), which passes them to
// the CLI through a pipe, never its command line or environment; a
// channel given none launches exactly as before. The servers' tools are
// asked about like any tool (can_use_tool).
//
// Files: config.go: Config, the file's format and Load; plugins.go: the
// plugins, from the file and CLAUDEOPS_PLUGIN_DIRS; mcpservers.go:
// the Extension, its Launcher and which servers a channel gets (the
// file's, admins', the setting's);
// commands.go: `mcp`.
package mcpservers
