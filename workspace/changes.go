package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Snapshot is an id of the worktree's current content (tracked and
// untracked files, not ignored ones): the tree written from a temporary
// copy of the worktree's index, which itself is never touched.
func (m *Manager) Snapshot(ctx context.Context, wt Worktree) (string, error) {
	r, err := m.open(wt)
	if err != nil {
		return "", err
	}
	if err := treeDir(wt); err != nil {
		return "", err
	}
	tree, err := m.snapshot(ctx, r, wt, adminDir(r, wt))
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", wt.Branch, err)
	}
	return tree, nil
}

// snapshot stages the worktree into a temporary index: a copy of the
// worktree's own when there is one (its stat data spares rehashing),
// else one read from the branch's tip.
func (m *Manager) snapshot(ctx context.Context, r *repoRef, wt Worktree, admin string) (string, error) {
	dir, release, err := m.makeTemp("index-")
	if err != nil {
		return "", err
	}
	defer release()
	index := filepath.Join(dir, "index")
	copied := false
	if admin != "" {
		switch err := copyFile(filepath.Join(admin, "index"), index); {
		case err == nil:
			copied = true
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
	}
	if !copied {
		if _, err := m.run(ctx, gitCall{repo: r, env: []string{"GIT_INDEX_FILE=" + index},
			args: []string{"read-tree", "refs/heads/" + wt.Branch}}); err != nil {
			return "", err
		}
	}
	return m.stage(ctx, r, wt, index)
}

// stage brings index to the worktree's content and writes its tree, the
// way "git add -A" would, but with plumbing that never enters a nested
// repository: "git add" asks every gitlink's repository for its status,
// running a git there that reads that repository's own configuration,
// which the worktree's content controls (a clean filter, an fsmonitor).
// Here the changed tracked paths come from diff-files with submodules
// judged by their HEAD only, the untracked from ls-files, and both go to
// update-index. Untracked files matching Options.Exclude stay out.
func (m *Manager) stage(ctx context.Context, r *repoRef, wt Worktree, index string) (string, error) {
	call := func(stdin []byte, args ...string) ([]byte, error) {
		return m.run(ctx, gitCall{
			repo: r, workTree: wt.Path, env: []string{"GIT_INDEX_FILE=" + index},
			args: args, stdin: stdin, maxOut: 1 << 30,
		})
	}
	changed, err := call(nil, "diff-files", "-z", "--name-only", "--ignore-submodules=dirty")
	if err != nil {
		return "", err
	}
	untracked, err := call(nil, append([]string{"ls-files", "-z", "--others", "--exclude-standard"}, m.exclude...)...)
	if err != nil {
		return "", err
	}
	var paths bytes.Buffer
	for _, list := range [][]byte{changed, untracked} {
		for p := range bytes.SplitSeq(list, []byte{0}) {
			// A nested repository is listed as "dir/"; it is staged as a gitlink.
			if p = bytes.TrimSuffix(p, []byte("/")); len(p) > 0 {
				paths.Write(p)
				paths.WriteByte(0)
			}
		}
	}
	if paths.Len() > 0 {
		if _, err := call(paths.Bytes(), "update-index", "-z", "--add", "--remove", "--replace", "--stdin"); err != nil {
			return "", err
		}
	}
	out, err := call(nil, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Changes is the stat between two snapshots (or the Base commit and a
// snapshot). from and to must be full object ids.
func (m *Manager) Changes(ctx context.Context, wt Worktree, from, to string) (Stat, error) {
	r, err := m.open(wt)
	if err != nil {
		return Stat{}, err
	}
	if !isObjectID(from) || !isObjectID(to) {
		return Stat{}, fmt.Errorf("changes of %s: %q..%q: not object ids", wt.Branch, from, to)
	}
	return m.numstat(ctx, r, from, to)
}

// Diff is the whole change of the thread: Base → the worktree as it is now
// (committed or not, untracked included), as a unified patch, and its
// stat. A patch over Options.MaxDiff is ErrDiffTooLarge, with the Stat.
// Binary files appear as "Binary files … differ"; a symlink as its target's
// name, never the content it points to.
func (m *Manager) Diff(ctx context.Context, wt Worktree) ([]byte, Stat, error) {
	r, err := m.open(wt)
	if err != nil {
		return nil, Stat{}, err
	}
	if err := treeDir(wt); err != nil {
		return nil, Stat{}, err
	}
	tree, err := m.snapshot(ctx, r, wt, adminDir(r, wt))
	if err != nil {
		return nil, Stat{}, fmt.Errorf("diff %s: %w", wt.Branch, err)
	}
	stat, err := m.numstat(ctx, r, wt.Base, tree)
	if err != nil {
		return nil, Stat{}, err
	}
	patch, err := m.run(ctx, gitCall{repo: r, maxOut: m.maxDiff, args: []string{
		"diff-tree", "-r", "-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv", "--submodule=short", wt.Base, tree,
	}})
	if errors.Is(err, errOutputCap) {
		return nil, stat, fmt.Errorf("diff %s: %w (over %d bytes)", wt.Branch, ErrDiffTooLarge, m.maxDiff)
	}
	if err != nil {
		return nil, Stat{}, fmt.Errorf("diff %s: %w", wt.Branch, err)
	}
	return patch, stat, nil
}

func (m *Manager) numstat(ctx context.Context, r *repoRef, from, to string) (Stat, error) {
	out, err := m.run(ctx, gitCall{repo: r, maxOut: 1 << 30, args: []string{
		"diff-tree", "-r", "-z", "-M", "--numstat", "--no-ext-diff", "--no-textconv", from, to,
	}})
	if err != nil {
		return Stat{}, fmt.Errorf("stat %s..%s: %w", from, to, err)
	}
	return parseNumstat(out)
}

// parseNumstat reads "git diff --numstat -z": "<added>\t<removed>\t<path>\0",
// or for a rename "<added>\t<removed>\t\0<old>\0<new>\0"; "-" counts mean binary.
func parseNumstat(out []byte) (Stat, error) {
	var st Stat
	if len(out) == 0 {
		return st, nil
	}
	fields := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	for i := 0; i < len(fields); i++ {
		line := fields[i]
		counts := strings.SplitN(string(line), "\t", 3)
		if len(counts) != 3 {
			return Stat{}, fmt.Errorf("numstat: unexpected %q", line)
		}
		f := FileStat{Path: counts[2]}
		if f.Path == "" { // a rename: the names follow
			if i+2 >= len(fields) {
				return Stat{}, errors.New("numstat: rename without its names")
			}
			f.OldPath, f.Path = string(fields[i+1]), string(fields[i+2])
			i += 2
		}
		if counts[0] == "-" && counts[1] == "-" {
			f.Binary = true
		} else {
			var errA, errR error
			f.Added, errA = strconv.Atoi(counts[0])
			f.Removed, errR = strconv.Atoi(counts[1])
			if errA != nil || errR != nil {
				return Stat{}, fmt.Errorf("numstat: unexpected counts %q", line)
			}
		}
		st.Files = append(st.Files, f)
		st.Added += f.Added
		st.Removed += f.Removed
	}
	return st, nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return errors.Join(err, dst.Close())
}
