package claudeproc

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/claudeops/claudeops/internal/fspath"
)

// Sandbox runs the CLI inside bubblewrap (bwrap): its own PID, IPC and UTS
// namespaces, so no process of the bot is visible; the whole file system
// read-only but for the session's working directory, a home of the
// thread's own and the Spec's Mounts asked writable (an empty one is an
// empty read-only directory, a scratch one a tmpfs of its own); the paths
// in Hide absent; a private /tmp. It is a Local runner with bwrap in
// front, so the bot still holds the process group: signals reach bwrap,
// and bwrap's death (or the bot's: --die-with-parent) ends every process
// in the sandbox, since they all live in its PID namespace.
//
// Not isolated: the network (the CLI must reach the model API), the uid
// (the sandbox runs as the bot's user, with no capabilities) and whatever
// the rest of the file system lets that user read.
type Sandbox struct {
	// Bwrap is the bubblewrap program; "" is "bwrap" on PATH.
	Bwrap string
	// Hide are paths made absent: an empty read-only directory over a
	// directory, an unreadable node over a file. Missing paths are skipped.
	// A session whose directory is one of them, or inside one, is refused.
	Hide []string
	// HomeBase holds the homes, one per thread
	// (HomeBase/<sha256 of Session.HomeKey>, created 0700), so a thread
	// resumes with what its CLI stored under ~/.claude. HomeBase itself is
	// hidden: a session sees its own home only.
	HomeBase string
}

// Start implements Runner.
func (s Sandbox) Start(ctx context.Context, spec Spec) (Handle, error) {
	home := s.home(spec.Session)
	spec.Env = sandboxEnv(spec.Env, home)
	// No keeper: the sandbox's PID namespace ends with bwrap, and bwrap
	// with the bot (the parent-death signal, and --die-with-parent for
	// what bwrap starts).
	h, err := Local{Wrap: func(bin string, args []string, spec Spec) (string, []string, error) {
		return s.wrap(bin, args, spec, home)
	}, noKeeper: true}.Start(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return sandboxHandle{h}, nil
}

// home is where the thread's home lives, outside and inside the sandbox.
func (s Sandbox) home(sess Session) string { return HomeIn(s.HomeBase, sess) }

// nsFlags make the sandbox's namespaces and keep it tied to the bot.
var nsFlags = []string{
	"--die-with-parent", // the bot's death ends the sandbox
	"--new-session",     // no controlling terminal to push input into
	"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	"--cap-drop", "ALL",
}

// Check reports, before any session, whether sessions in dir can run: bwrap
// is found and can make its namespaces here, HomeBase can be made, and dir
// is one the sandbox may give. It runs `true` in a sandbox once.
func (s Sandbox) Check(ctx context.Context, dir string) error {
	bwrap, hidden, err := s.prepare()
	if err != nil {
		return err
	}
	if _, err := sessionDir(dir, hidden); err != nil {
		return err
	}
	return namespacesWork(ctx, bwrap)
}

// namespacesWork runs `true` in a sandbox of bwrap once: whether the host
// lets it make the namespaces (a container's seccomp profile, a kernel
// without unprivileged user namespaces may not).
func namespacesWork(ctx context.Context, bwrap string) error {
	args := append(slices.Clone(nsFlags), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true")
	if out, err := exec.CommandContext(ctx, bwrap, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("bubblewrap cannot make a sandbox here: %w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// prepare finds bwrap, makes HomeBase (it must exist to be hidden) and
// resolves the paths to hide.
func (s Sandbox) prepare() (bwrap string, hidden []hiddenPath, err error) {
	if bwrap, err = exec.LookPath(cmp.Or(s.Bwrap, "bwrap")); err != nil {
		return "", nil, fmt.Errorf("find bubblewrap: %w", err)
	}
	if s.HomeBase == "" || !filepath.IsAbs(s.HomeBase) {
		return "", nil, fmt.Errorf("the sandbox's home base must be an absolute path, got %q", s.HomeBase)
	}
	if err := os.MkdirAll(s.HomeBase, 0o700); err != nil {
		return "", nil, fmt.Errorf("make sandbox homes: %w", err)
	}
	hidden, err = resolveAll(append([]string{s.HomeBase}, s.Hide...))
	return bwrap, hidden, err
}

// wrap checks the session may run here, makes its home, and returns the
// bwrap command line that runs bin with args inside the sandbox.
func (s Sandbox) wrap(bin string, args []string, spec Spec, home string) (string, []string, error) {
	bwrap, hidden, err := s.prepare()
	if err != nil {
		return "", nil, err
	}
	dir, err := sessionDir(spec.Dir, hidden)
	if err != nil {
		return "", nil, err
	}
	mounts, err := sandboxMounts(spec.Mounts, dir, hidden)
	if err != nil {
		return "", nil, err
	}
	realBin, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return "", nil, fmt.Errorf("resolve the claude CLI %s: %w", bin, err)
	}
	if insideAny(realBin, hidden) != "" {
		return "", nil, fmt.Errorf("the claude CLI %s is inside a hidden path", bin)
	}
	if err := makeHome(s.HomeBase, home); err != nil {
		return "", nil, fmt.Errorf("sandbox: %w", err)
	}
	out := append(slices.Clone(nsFlags),
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		// The CLI stays visible where the private /tmp would cover it (an
		// install under /tmp): its directory, read-only, and run by its
		// resolved path, since a link to it may lie elsewhere.
		"--ro-bind", filepath.Dir(realBin), filepath.Dir(realBin),
		"--bind", dir, dir,
	)
	// The mounts too lie under the hidden paths. An empty one is made
	// read-only last, once the mount points inside it are made.
	var readOnly []string
	for _, m := range mounts {
		switch m.Access {
		case ReadOnly:
			out = append(out, "--ro-bind", m.Path, m.Path)
		case ReadWrite:
			out = append(out, "--bind", m.Path, m.Path)
		case Empty:
			out = append(out, "--tmpfs", m.Path)
			readOnly = append(readOnly, "--remount-ro", m.Path)
		case Scratch:
			out = append(out, "--tmpfs", m.Path)
		}
	}
	// Hidden paths come after the working directory, so one inside it is
	// hidden too; the home after them, as it lives in a hidden HomeBase.
	for _, h := range hidden {
		if h.dir {
			out = append(out, "--tmpfs", h.path)
			readOnly = append(readOnly, "--remount-ro", h.path)
		} else {
			out = append(out, "--ro-bind", os.DevNull, h.path)
		}
	}
	out = append(out, "--bind", home, home)
	out = append(out, readOnly...) // last: the home's mount point is made first
	out = append(out, "--chdir", dir, "--", realBin)
	return bwrap, append(out, args...), nil
}

// hiddenPath is a path to hide, resolved, and whether it is a directory.
type hiddenPath struct {
	path string
	dir  bool
}

// resolveAll resolves symlinks (the mount must cover what the path names)
// and drops paths that do not exist, and those inside another (hidden with
// it: a mount point there would show its name).
func resolveAll(paths []string) ([]hiddenPath, error) {
	var all []hiddenPath
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("hidden path %q is not absolute", p)
		}
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("resolve hidden path %s: %w", p, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("hidden path %s: %w", p, err)
		}
		all = append(all, hiddenPath{path: real, dir: fi.IsDir()})
	}
	var out []hiddenPath
	for i, h := range all {
		if !coveredBy(h.path, all, i) {
			out = append(out, h)
		}
	}
	return out, nil
}

// coveredBy reports whether p lies in another path of hidden, or equals an
// earlier one (hidden[i] itself aside).
func coveredBy(p string, hidden []hiddenPath, i int) bool {
	for j, h := range hidden {
		switch {
		case j == i:
		case p == h.path:
			if j < i {
				return true
			}
		case fspath.Within(p, h.path): // below it: equal is the case above
			return true
		}
	}
	return false
}

// sessionDir resolves the working directory and refuses one the sandbox
// cannot give: the root (all of it writable) or one inside a hidden path
// (binding it would show what is hidden).
func sessionDir(dir string, hidden []hiddenPath) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if real == "/" {
		return "", errors.New("refusing / as a sandboxed session's working directory")
	}
	if h := insideAny(real, hidden); h != "" {
		return "", fmt.Errorf("refusing working directory %s: it is inside %s, which sessions may not see", dir, h)
	}
	return real, nil
}

// sandboxMounts resolves the mounts' links (the bind must cover what the
// path names) and refuses one inside a hidden path, which it would show.
func sandboxMounts(mounts []Mount, dir string, hidden []hiddenPath) ([]Mount, error) {
	resolved := make([]Mount, 0, len(mounts))
	for _, m := range mounts {
		real, err := filepath.EvalSymlinks(m.Path)
		if err != nil {
			return nil, fmt.Errorf("mount %s: %w", m.Path, err)
		}
		if h := insideAny(real, hidden); h != "" {
			return nil, fmt.Errorf("refusing mount %s: it is inside %s, which sessions may not see", m.Path, h)
		}
		resolved = append(resolved, Mount{Path: real, Access: m.Access})
	}
	return NestMounts(resolved, dir)
}

// insideAny returns the hidden path p equals or lies in, "" if none.
func insideAny(p string, hidden []hiddenPath) string {
	for _, h := range hidden {
		if fspath.Within(p, h.path) {
			return h.path
		}
	}
	return ""
}

// sandboxEnv points HOME at the thread's home. TMPDIR and
// CLAUDE_CONFIG_DIR named places outside, read-only in the sandbox: the
// CLI uses /tmp and the home instead.
func sandboxEnv(env []string, home string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "TMPDIR", "CLAUDE_CONFIG_DIR":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+home)
}

// sandboxHandle is bwrap's process; the CLI is its child in the sandbox.
type sandboxHandle struct{ Handle }

func (h sandboxHandle) Name() string { return "sandbox " + h.Handle.Name() }

// Pid is bwrap's process id (and its group's): signalling the group ends
// the sandbox.
func (h sandboxHandle) Pid() int {
	if l, ok := h.Handle.(interface{ Pid() int }); ok {
		return l.Pid()
	}
	return 0
}

// Group implements Grouped: bwrap's group.
func (h sandboxHandle) Group() (Group, bool) {
	if g, ok := h.Handle.(Grouped); ok {
		return g.Group()
	}
	return Group{}, false
}

// CanMount implements MountChecker: the sandbox shows any directory that
// is not hidden.
func (s Sandbox) CanMount(dir string) bool {
	hidden, err := resolveAll(append([]string{s.HomeBase}, s.Hide...))
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(dir)
	return err == nil && insideAny(real, hidden) == ""
}
