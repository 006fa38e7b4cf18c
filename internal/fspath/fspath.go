// Package fspath holds the one answer the bot gives, everywhere, to "does
// this path lie in that directory": rules and grants (approvals), the state
// kept apart from work (cmd/claudeops, bot's `cwd`) and what a sandbox hides
// (claudeproc) must not disagree on it. It is a production leaf of
// internal/ (as internal/proc is; the rest is the tests'): it imports
// nothing of this repository.
package fspath

import (
	"path/filepath"
	"strings"
)

// Within reports whether p is dir or lies below it. Both are absolute; they
// are compared lexically, after cleaning ("/a/b/.." is "/a"), with no
// symlink resolved: resolve first where links matter. "/work2" is not
// within "/work"; every absolute path is within "/".
func Within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
