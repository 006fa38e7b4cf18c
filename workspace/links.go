package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
)

// linkPlaces are where, in a clone, a link would make the bot's git read
// or write what the link names (packed-refs put a file's first line in
// git's error; a reflog line appended to a file; a loose object or ref
// written into another directory): the clone's own entries, refs/ and
// logs/ throughout, objects/ and objects/pack/, and each worktree's
// administrative directory. Git makes no link in any of them.
var linkPlaces = []struct {
	dir string
	all bool // throughout, not only its own entries
}{{".", false}, {"refs", true}, {"logs", true}, {"objects", false}, {"objects/pack", false}}

// links lists the links in a clone's linkPlaces, as paths below it.
func links(clone string) []string {
	var out []string
	note := func(p string, d fs.DirEntry) {
		if d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(clone, p)
			out = append(out, rel)
		}
	}
	places := linkPlaces
	admins, _ := filepath.Glob(filepath.Join(clone, "worktrees", "*"))
	for _, a := range admins {
		rel, _ := filepath.Rel(clone, a)
		places = append(places, struct {
			dir string
			all bool
		}{rel, false})
	}
	for _, pl := range places {
		dir := filepath.Join(clone, pl.dir)
		if pl.all {
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && p != dir {
					note(p, d)
				}
				return nil
			})
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			note(filepath.Join(dir, e.Name()), e)
		}
	}
	return out
}
