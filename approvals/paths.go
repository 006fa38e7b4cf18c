package approvals

import (
	"encoding/json"
	"path"
	"path/filepath"
	"strings"
)

// fileTools name the field holding the file a tool reads or writes.
var fileTools = map[string]bool{
	"Read": true, "Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true,
}

// dirTools search under input.path, the working directory when absent.
var dirTools = map[string]bool{"Glob": true, "Grep": true}

func isPathTool(tool string) bool { return fileTools[tool] || dirTools[tool] }

// toolPath returns the absolute, cleaned path a file tool call touches. For
// Glob and Grep it is the directory searched; a Glob pattern that starts
// with literal directories ("/etc/*.conf", "../x/**") moves that directory.
// ok is false when the path is missing, relative without an absolute cwd, or
// a Glob pattern climbs ("..") after a wildcard, where no directory bounds it.
func toolPath(tool string, input json.RawMessage, cwd string) (string, bool) {
	fields, ok := decodeObject(input)
	if !ok {
		return "", false
	}
	if fileTools[tool] {
		p, _ := stringField(fields, "file_path")
		if p == "" {
			p, _ = stringField(fields, "notebook_path")
		}
		return resolvePath(p, cwd)
	}
	p, _ := stringField(fields, "path")
	if p == "" {
		p = "."
	}
	root, ok := resolvePath(p, cwd)
	if !ok {
		return "", false
	}
	if tool != "Glob" {
		return root, true
	}
	pat, _ := stringField(fields, "pattern")
	return globRoot(root, pat)
}

// globRoot joins the literal leading directories of a Glob pattern to root.
func globRoot(root, pattern string) (string, bool) {
	if pattern == "" {
		return root, true
	}
	base := root
	if filepath.IsAbs(pattern) {
		base = "/"
	}
	segs := strings.Split(filepath.ToSlash(pattern), "/")
	var literal []string
	wild := false
	for i, s := range segs {
		if i == len(segs)-1 && !wild {
			break // the last segment names files, not a directory
		}
		if wild {
			if s == ".." {
				return "", false
			}
			continue
		}
		if strings.ContainsAny(s, "*?[{\\") {
			wild = true
			continue
		}
		literal = append(literal, s)
	}
	return filepath.Join(append([]string{base}, literal...)...), true
}

// resolvePath makes p absolute against cwd and cleans it.
func resolvePath(p, cwd string) (string, bool) {
	if p == "" {
		return "", false
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), true
	}
	if !filepath.IsAbs(cwd) {
		return "", false
	}
	return filepath.Join(cwd, p), true
}

// matchPathGlob reports whether the absolute, clean name matches pattern,
// resolved against cwd. "*" and "?" stay within a segment, "**" spans any
// number of segments (zero included), "[…]" and "\" work as in path.Match.
func matchPathGlob(pattern, name, cwd string) bool {
	pat, ok := resolvePath(pattern, cwd)
	if !ok {
		return false
	}
	return matchSegments(splitPath(pat), splitPath(name))
}

func splitPath(p string) []string {
	p = strings.Trim(filepath.ToSlash(p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// matchSegments matches pattern segments against name segments; "**" is a
// multi-segment star. Dynamic programming keeps it linear in each.
func matchSegments(pat, name []string) bool {
	prev := make([]bool, len(name)+1) // prev[j]: pat[:i] matches name[:j]
	prev[0] = true
	for _, p := range pat {
		cur := make([]bool, len(name)+1)
		for j := range cur {
			if p == "**" {
				cur[j] = prev[j] || (j > 0 && cur[j-1])
			} else if j > 0 && prev[j-1] {
				ok, err := path.Match(p, name[j-1])
				cur[j] = ok && err == nil
			}
		}
		prev = cur
	}
	return prev[len(name)]
}

// escapeGlob quotes the bytes path.Match treats specially.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, "*?[\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("*?[\\", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodeObject decodes a JSON object's top-level fields.
func decodeObject(input json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// stringField returns a string field; ok is false when it is absent or not a string.
func stringField(m map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}
