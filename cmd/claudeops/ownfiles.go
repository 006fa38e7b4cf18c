package main

import (
	"path/filepath"
	"slices"
	"strings"
)

// matrixFiles are the Matrix adapter's crypto store and recovery-key file,
// kept beside the database.
func matrixFiles(cfg config) (cryptoDB, recoveryKey string) {
	base := strings.TrimSuffix(cfg.DB, filepath.Ext(cfg.DB))
	return base + ".matrix-crypto.db", base + ".matrix-recovery-key"
}

// ownFiles are the bot's own files, its state directory and the
// directories its runners own (the CLI homes, also where
// CLAUDEOPS_SANDBOX_HOMES puts them outside the state directory),
// absolute, each also with its symlinks resolved when that differs: no
// rule, grant or mode lets a tool call touch them (approvals.Protected),
// and no channel's working directory may hold them (the cwd command).
func ownFiles(cfg config) []string {
	crypto, key := matrixFiles(cfg)
	var out []string
	if cfg.StateDir != "" {
		out = append(out, absPath(cfg.StateDir))
	}
	h, inUse := cfg.host(nil), cfg.Runner.inUse()
	for _, k := range cfg.Runner.kinds() {
		out = append(out, k.OwnDirs(h, k == inUse)...)
	}
	for _, f := range []string{cfg.DB, crypto} {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			out = append(out, absPath(f+suffix))
		}
	}
	out = append(out, absPath(key), logPath(cfg))
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
