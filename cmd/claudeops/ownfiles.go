package main

import (
	"path/filepath"
	"slices"

	"github.com/claudeops/claudeops/store"
)

// ownFiles are the bot's own files (its database, the files the platforms
// keep beside it, the log, the operator's MCP servers file and the secret
// files it names, the settings file), its state directory and the directories its
// runners own (the CLI homes, also where CLAUDEOPS_SANDBOX_HOMES puts them
// outside the state directory), absolute, each also with its symlinks
// resolved when that differs: no rule, grant or mode lets a tool call
// touch them (approvals.Protected), and no channel's working directory may
// hold them (the cwd command).
func ownFiles(cfg config) []string {
	dbs, files := cfg.platformFiles()
	var out []string
	if cfg.StateDir != "" {
		out = append(out, absPath(cfg.StateDir))
	}
	h, inUse := cfg.host(nil), cfg.Runner.inUse()
	for _, k := range cfg.Runner.kinds() {
		out = append(out, k.OwnDirs(h, k == inUse)...)
	}
	for _, f := range append([]string{cfg.DB}, dbs...) {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal", ".reserve"} {
			out = append(out, absPath(f+suffix))
		}
	}
	for _, f := range files {
		out = append(out, absPath(f))
	}
	out = append(out, absPath(store.MarkPath(cfg.DB)), logPath(cfg))
	out = append(out, cfg.mcp.Files()...) // the operator's MCP servers' secrets
	if cfg.SettingsFile != "" {           // who writes it is a bot admin
		out = append(out, absPath(cfg.SettingsFile))
	}
	for _, p := range out {
		if r, err := realPath(p); err == nil && r != p && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
