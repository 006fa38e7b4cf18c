package claudeproc

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/claudeops/claudeops/internal/fspath"
)

// A Mount is a directory of the host that a session sees beside its
// working directory, at the same path: the parts of a worktree's git
// repository that lie outside the worktree, say. Runners that isolate the
// session (Sandbox, docker, kubernetes) show each as its Access says;
// Local, under which a session sees the whole file system, has nothing to
// do.
type Mount struct {
	// Path is absolute and clean, a directory that exists.
	Path   string
	Access Access
}

// Access is how a session sees a Mount.
type Access int

const (
	// ReadOnly: its content, unwritable.
	ReadOnly Access = iota
	// ReadWrite: its content, writable by the session's user.
	ReadWrite
	// Empty: an empty directory in its place, so that what it holds is
	// hidden from the session (mounts inside it still show).
	Empty
	// Scratch: an empty writable directory in its place, the session's
	// own, gone with it: what it holds on the host is neither seen nor
	// written.
	Scratch
)

func (a Access) String() string {
	switch a {
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	case Empty:
		return "empty"
	case Scratch:
		return "scratch"
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// NestMounts checks mounts and orders them as runners apply them: parents
// first (fewer path elements), so that a mount inside another lies over
// it. It refuses a relative or unclean path, the root, two mounts at one
// path, and a mount that holds the working directory dir or lies in it
// (the working directory is the session's own, read-write, whatever a
// mount would say).
func NestMounts(mounts []Mount, dir string) ([]Mount, error) {
	out := slices.Clone(mounts)
	for _, m := range out {
		switch {
		case !filepath.IsAbs(m.Path) || filepath.Clean(m.Path) != m.Path || m.Path == "/":
			return nil, fmt.Errorf("mount %q: want an absolute, clean path other than /", m.Path)
		case m.Access < ReadOnly || m.Access > Scratch:
			return nil, fmt.Errorf("mount %s: unknown access %d", m.Path, int(m.Access))
		case dir != "" && (fspath.Within(m.Path, dir) || fspath.Within(dir, m.Path)):
			return nil, fmt.Errorf("mount %s: it holds the working directory %s or lies in it", m.Path, dir)
		}
	}
	slices.SortStableFunc(out, func(a, b Mount) int {
		return cmp.Or(cmp.Compare(depth(a.Path), depth(b.Path)), strings.Compare(a.Path, b.Path))
	})
	for i := 1; i < len(out); i++ {
		if out[i].Path == out[i-1].Path {
			return nil, errors.New("two mounts at " + out[i].Path)
		}
	}
	return out, nil
}

// depth is how many elements an absolute, clean path has.
func depth(p string) int { return strings.Count(p, "/") }

// HoldsOthers reports whether another of mounts lies inside mounts[i]: an
// empty mount that holds none can be read-only from the start, while one
// that holds some must stay writable for their mount points to be made.
func HoldsOthers(mounts []Mount, i int) bool {
	for j, m := range mounts {
		if j != i && m.Path != mounts[i].Path && fspath.Within(m.Path, mounts[i].Path) {
			return true
		}
	}
	return false
}
