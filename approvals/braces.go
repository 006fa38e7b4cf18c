package approvals

import "strings"

// braceExpand returns the words Bash's brace expansion may make of the
// word s: "{a,b}" (nested too) gives each alternative, a sequence
// "{x..y}" gives "*" (any name: a glob for the callers). nil means more
// than limit words. Quoting is not known here, so every brace counts:
// the callers only learn of more names than Bash would make, never fewer.
func braceExpand(s string, limit int) []string {
	out := []string{}
	if !expandInto(s, limit, &out) {
		return nil
	}
	return out
}

func expandInto(s string, limit int, out *[]string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '{' || i > 0 && s[i-1] == '$' {
			continue
		}
		end, commas := braceGroup(s, i)
		if end < 0 {
			continue
		}
		pre, body, post := s[:i], s[i+1:end], s[end+1:]
		if len(commas) == 0 {
			if strings.Contains(body, "..") {
				return expandInto(pre+"*"+post, limit, out)
			}
			continue // "{x}" stays as it is
		}
		start := 0
		for _, c := range append(commas, len(body)) {
			if !expandInto(pre+body[start:c]+post, limit, out) {
				return false
			}
			start = c + 1
		}
		return true
	}
	if len(*out) >= limit {
		return false
	}
	*out = append(*out, s)
	return true
}

// braceGroup returns the index of the '}' closing the '{' at open, and
// the offsets (within the group's body) of its top-level commas; end is
// -1 when the brace is not closed.
func braceGroup(s string, open int) (end int, commas []int) {
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j, commas
			}
		case ',':
			if depth == 1 {
				commas = append(commas, j-open-1)
			}
		}
	}
	return -1, nil
}
