package approvals

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Commands that name a protected place: no allow rule matches them.

// cmdProtectedNames are path segments a command may not name under any
// rule: the CLI's and git's directories, the CLI's user state, and the
// startup files (startupFiles). Compared case-insensitively.
var cmdProtectedNames = append([]string{".claude", ".git", ".claude.json"}, startupFiles...)

// startupFiles are read by shells and tools at their start (the CLI keeps
// the same list of files a command must not write): an alias in .bashrc,
// a hook in .gitconfig or a script shell in .npmrc turns a later allowed
// command into any command. The CLI snapshots the shell's startup files
// and sources the snapshot before every Bash command.
var startupFiles = []string{
	".bashrc", ".bash_profile", ".bash_aliases", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".gitconfig", ".npmrc", ".yarnrc",
	".yarnrc.yml", ".bunfig.toml", ".ripgreprc", ".envrc", ".netrc", ".mcp.json", ".gitmodules",
}

// maxCommandPaths bounds the paths one command is checked as (brace
// expansions, pieces, resolutions); a command beyond it is protected.
const maxCommandPaths = 4096

// commandProtected reports whether a command tool's call names a
// protected place in any word: as written, after brace, "~" and $HOME
// expansion, as the value of --opt=value or -ovalue and in the pieces
// between ":", "," and "=", and, made absolute against c.Cwd, with its
// symlinks resolved by c.Resolve. A word with any other variable may
// name anything, and is protected. A command outside the allow grammar,
// which only an exact rule can match, is searched as text.
func commandProtected(c Call) bool {
	cmd, ok := toolCommand(c.Tool, c.Input)
	if !ok {
		return false // unreadable: no allow rule matches it anyway
	}
	cmds, err := parseAllow(trimCommand(cmd))
	if err != nil {
		return textProtected(cmd, c)
	}
	chk := pathCheck{c: c}
	for _, sc := range cmds {
		for _, w := range sc.words {
			if chk.word(w) {
				return true
			}
		}
	}
	return false
}

// textProtected searches a command the grammar cannot read for the
// protected names as tokens, and for the bot's and the CLI's places.
func textProtected(cmd string, c Call) bool {
	low := strings.ToLower(cmd)
	if strings.Contains(low, ".config/git") {
		return true
	}
	tokens := strings.FieldsFunc(low, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("._-", r))
	})
	for _, t := range tokens {
		for _, n := range cmdProtectedNames {
			if t == n {
				return true
			}
		}
	}
	for _, p := range append(append([]string{}, c.Own...), c.CLIDirs...) {
		if p != "" && strings.Contains(cmd, p) {
			return true
		}
	}
	return false
}

// pathCheck checks the words of one command, within maxCommandPaths.
type pathCheck struct {
	c     Call
	spent int
}

// word reports whether w may name a protected place.
func (k *pathCheck) word(w shWord) bool {
	t := w.text
	cands := []string{t}
	if strings.HasPrefix(t, "-") {
		if _, v, ok := strings.Cut(t, "="); ok {
			cands = append(cands, v)
		}
		if !strings.HasPrefix(t, "--") && len(t) > 2 {
			cands = append(cands, t[2:]) // -ovalue
		}
	}
	cands = append(cands, strings.FieldsFunc(t, func(r rune) bool { return r == ':' || r == ',' || r == '=' })...)
	slices.Sort(cands)
	for _, s := range slices.Compact(cands) {
		if k.candidate(s, !w.literal) {
			return true
		}
	}
	return false
}

// candidate checks one string a word may name; expand: the word is not
// literal, so Bash expands braces, "~", variables and globs in it.
func (k *pathCheck) candidate(s string, expand bool) bool {
	forms := []string{s}
	if expand {
		forms = braceExpand(s, maxCommandPaths)
		if forms == nil {
			return true // too many to check
		}
		forms = append(forms, s)
	}
	for _, f := range forms {
		if k.spent++; k.spent > maxCommandPaths {
			return true
		}
		if expand {
			var ok bool
			if f, ok = k.expandHome(f); !ok {
				return true // another variable: its value may be any path
			}
		}
		if k.path(f, expand) {
			return true
		}
	}
	return false
}

// expandHome expands a leading "~" or "~/" and every $HOME and ${HOME} to
// c.Home (left as "~" when unknown); ok is false when another variable
// is left.
func (k *pathCheck) expandHome(f string) (string, bool) {
	home := k.c.Home
	if home == "" {
		home = "~"
	}
	if f == "~" || strings.HasPrefix(f, "~/") {
		f = home + f[1:]
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '$' {
			b.WriteByte(f[i])
			continue
		}
		rest := f[i+1:]
		switch {
		case strings.HasPrefix(rest, "{HOME}"):
			b.WriteString(home)
			i += len("{HOME}")
		case strings.HasPrefix(rest, "HOME") && nameLen(rest) == len("HOME"):
			b.WriteString(home)
			i += len("HOME")
		default:
			return "", false
		}
	}
	return b.String(), true
}

// path checks one expanded string: its segments as written, then as an
// absolute path (against c.Cwd), then with its symlinks resolved.
func (k *pathCheck) path(p string, glob bool) bool {
	if segmentsProtected(splitPath(p), glob) {
		return true
	}
	abs := p
	if !filepath.IsAbs(abs) {
		if !filepath.IsAbs(k.c.Cwd) {
			return false
		}
		abs = filepath.Join(k.c.Cwd, p)
	}
	abs = filepath.Clean(abs)
	if k.placeProtected(abs, glob) {
		return true
	}
	if k.c.Resolve == nil {
		return false
	}
	// Resolve what can exist: the literal directories before a glob.
	segs := splitPath(abs)
	lit := len(segs)
	if glob {
		for i, s := range segs {
			if strings.ContainsAny(s, "*?[") {
				lit = i
				break
			}
		}
	}
	if k.spent++; k.spent > maxCommandPaths {
		return true
	}
	r := k.c.Resolve("/" + strings.Join(segs[:lit], "/"))
	if r == "" {
		return false
	}
	res := filepath.Join(append([]string{r}, segs[lit:]...)...)
	return segmentsProtected(splitPath(res), glob) || k.placeProtected(res, glob)
}

// placeProtected reports whether the absolute path abs names a protected
// place by its segments, or lies in the bot's own files or the CLI's
// configuration directories.
func (k *pathCheck) placeProtected(abs string, glob bool) bool {
	segs := splitPath(abs)
	if segmentsProtected(segs, glob) {
		return true
	}
	for _, dir := range append(append([]string{}, k.c.Own...), k.c.CLIDirs...) {
		if dir != "" && globWithin(segs, splitPath(filepath.Clean(dir)), glob) {
			return true
		}
	}
	return false
}

// segmentsProtected reports whether a path's segments hold a protected
// name (cmdProtectedNames) or ".config/git"; with glob, a segment's
// pattern that may match one counts.
func segmentsProtected(segs []string, glob bool) bool {
	for i, s := range segs {
		for _, n := range cmdProtectedNames {
			if segmentMayBe(s, n, glob) {
				return true
			}
		}
		if i+1 < len(segs) && segmentMayBe(s, ".config", glob) && segmentMayBe(segs[i+1], "git", glob) {
			return true
		}
	}
	return false
}

// segmentMayBe reports whether the path segment s is name, or, with glob,
// may match it. Bash matches a leading "." only literally (dotglob is off
// by default), so "*rc" never names ".bashrc". A pattern path.Match cannot
// read counts as a match.
func segmentMayBe(s, name string, glob bool) bool {
	if !glob || !strings.ContainsAny(s, "*?[") {
		return strings.EqualFold(s, name)
	}
	if name[0] == '.' && s[0] != '.' {
		return false
	}
	pat := strings.ReplaceAll(strings.ToLower(s), "[!", "[^")
	ok, err := path.Match(pat, strings.ToLower(name))
	return ok || err != nil
}

// globWithin reports whether a path of segs (patterns, with glob) may lie
// in dir or be dir.
func globWithin(segs, dir []string, glob bool) bool {
	if len(segs) < len(dir) {
		return false
	}
	for i, d := range dir {
		s := segs[i]
		if !glob || !strings.ContainsAny(s, "*?[") {
			if s != d {
				return false
			}
			continue
		}
		if d != "" && d[0] == '.' && s[0] != '.' {
			return false
		}
		if ok, err := path.Match(strings.ReplaceAll(s, "[!", "[^"), d); !ok && err == nil {
			return false
		}
	}
	return true
}
