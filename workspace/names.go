package workspace

import (
	"regexp"
	"strings"
	"sync"
)

// BranchPrefix starts every branch the manager makes; local branches of a
// clone are only these.
const BranchPrefix = "claudeops/"

// maxName is the longest name part of a branch before a uniqueness suffix.
const maxName = 40

// sanitize makes s a name safe as both a ref component and a directory
// name: lower-case ASCII letters, digits, "_" and "-" only (so no "..",
// "@{", ".lock", "/" or leading "."), every other run of bytes one "-",
// no "-" at either end (never an option), at most n bytes. It may be empty.
func sanitize(s string, n int) string {
	var b strings.Builder
	dash := false
	for _, c := range []byte(strings.ToLower(s)) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' {
			b.WriteByte(c)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= n {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}

// component is what a Create makes of its name argument.
func component(name string) string {
	if c := sanitize(name, maxName); c != "" {
		return c
	}
	return "work"
}

// validComponent says whether c could have come from component, possibly
// with a uniqueness suffix: the check on a Worktree handed back to us,
// compiled at first use rather than at every start.
var validComponent = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?$`)
})

// isObjectID says whether s is a full object id (SHA-1 or SHA-256), the
// only form in which ids cross the API (never a ref or an option).
var isObjectID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`).MatchString

// validRef applies git's check-ref-format rules to a full ref name, for
// names the remote sends (its default branch), before they reach git.
func validRef(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.HasSuffix(ref, "/") || strings.HasSuffix(ref, ".") ||
		strings.Contains(ref, "..") || strings.Contains(ref, "@{") || strings.Contains(ref, "//") || ref == "@" {
		return false
	}
	for _, c := range []byte(ref) {
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	for part := range strings.SplitSeq(ref, "/") {
		if part == "" || strings.HasPrefix(part, ".") || strings.HasPrefix(part, "-") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	return true
}
