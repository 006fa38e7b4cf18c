package settings

import (
	"path"
	"strings"
)

// MatchUser reports whether user is named by list: an entry equal to it,
// or a pattern (path.Match: *, ?, [...]) that matches it.
func MatchUser(list []string, user string) bool {
	for _, p := range list {
		p = strings.TrimSpace(p)
		if p == user {
			return true
		}
		if strings.ContainsAny(p, "*?[") {
			if ok, _ := path.Match(p, user); ok {
				return true
			}
		}
	}
	return false
}
