package main

import (
	"path/filepath"
	"strings"
)

// matrixFiles are the Matrix adapter's crypto store and recovery-key file,
// kept beside the database.
func matrixFiles(cfg config) (cryptoDB, recoveryKey string) {
	base := strings.TrimSuffix(cfg.DB, filepath.Ext(cfg.DB))
	return base + ".matrix-crypto.db", base + ".matrix-recovery-key"
}

// ownFiles are the files of the bot's own state, absolute: no rule, grant
// or mode lets a tool call touch them (approvals.Protected).
func ownFiles(cfg config) []string {
	crypto, key := matrixFiles(cfg)
	var out []string
	for _, f := range []string{cfg.DB, crypto} {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			out = append(out, absPath(f+suffix))
		}
	}
	return append(out, absPath(key))
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
