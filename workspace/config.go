package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The clone's configuration is the bot's alone (see the package doc):
// config.lock, a directory, keeps every git from writing it, and each git
// call of ours is checked against it before and after.

// lockName is the directory that keeps git from taking the config's lock.
const lockName = "config.lock"

// ErrTampered is a clone whose git configuration is not what the bot
// wrote: the call was refused and the configuration restored.
var ErrTampered = errors.New("workspace: the clone's git configuration was changed outside the bot")

// configFor is the whole config file of a clone of remoteURL: what git
// init --bare writes on Linux, the remote, and gc kept in the foreground.
// No include, no worktree config: nothing else is read beside it.
func configFor(remoteURL string) []byte {
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(remoteURL)
	return []byte("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n" +
		"[remote \"origin\"]\n\turl = \"" + quoted + "\"\n" +
		"\tfetch = +refs/heads/*:refs/remotes/origin/*\n\ttagOpt = --no-tags\n" +
		"[gc]\n\tautoDetach = false\n")
}

// sealConfig writes the clone's config and its lock.
func sealConfig(dir string, want []byte) error {
	if err := writeConfig(dir, want); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(dir, lockName), 0o500); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("lock the config of %s: %w", dir, err)
	}
	return nil
}

// writeConfig replaces the config file whole: a temporary file renamed
// over it, never a write through whatever stands at its name.
func writeConfig(dir string, want []byte) error {
	tmp := filepath.Join(dir, "config.claudeops-"+randomHex(6))
	if err := os.WriteFile(tmp, want, 0o600); err != nil {
		return fmt.Errorf("write the config of %s: %w", dir, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "config")); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write the config of %s: %w", dir, err)
	}
	return nil
}

// checkConfig says what in the git directory dir differs from what the
// bot made: its config's bytes, files git would read as configuration
// beside it, and links where git would follow them (links.go). Each difference is undone (a missing lock quietly, as an
// older bot made none) and named in found.
func (m *Manager) checkConfig(dir string, want []byte) (found []string, err error) {
	if m.checkOff {
		return nil, nil
	}
	if fi, err := os.Lstat(dir); err != nil {
		return nil, fmt.Errorf("clone %s: %w", dir, err)
	} else if !fi.IsDir() {
		// A link in the clone's place leads git to a repository of its
		// maker's; removed, the clone is made again by the next Create.
		if err := os.Remove(dir); err != nil {
			return nil, fmt.Errorf("%w (the clone %s is not a directory): %w", ErrTampered, dir, err)
		}
		return []string{"the clone is not a directory (removed)"}, nil
	}
	got, err := readRegular(filepath.Join(dir, "config"))
	if err != nil || !bytes.Equal(got, want) {
		found = append(found, "config differs from what the bot wrote")
	}
	for _, l := range links(dir) {
		found = append(found, l+" is a link")
		if err := os.Remove(filepath.Join(dir, l)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return found, fmt.Errorf("%w (%s): %w", ErrTampered, strings.Join(found, "; "), err)
		}
	}
	extra := []string{filepath.Join(dir, "commondir"), filepath.Join(dir, "config.worktree")}
	admins, _ := filepath.Glob(filepath.Join(dir, "worktrees", "*", "config.worktree"))
	for _, p := range append(extra, admins...) {
		if _, err := os.Lstat(p); err == nil {
			rel, _ := filepath.Rel(dir, p)
			found = append(found, rel+" exists")
			if err := os.RemoveAll(p); err != nil {
				return found, fmt.Errorf("%w (%s): %w", ErrTampered, strings.Join(found, "; "), err)
			}
		}
	}
	_, lockErr := os.Lstat(filepath.Join(dir, lockName))
	if errors.Is(lockErr, fs.ErrNotExist) {
		m.log.Warn("the clone's config lock was missing; made again", "clone", dir)
	}
	if len(found) > 0 || errors.Is(lockErr, fs.ErrNotExist) {
		if err := sealConfig(dir, want); err != nil {
			return found, fmt.Errorf("%w (%s): %w", ErrTampered, strings.Join(found, "; "), err)
		}
	}
	return found, nil
}

// tampered logs what checkConfig found and makes the error the thread is
// told; when says at which side of the git call it was found.
func (m *Manager) tampered(dir, cmd string, found []string, when string) error {
	what := strings.Join(found, "; ")
	m.log.Error("refused: the clone's git configuration was changed outside the bot",
		"clone", dir, "cmd", cmd, "found", what)
	return fmt.Errorf("git %s: %w (%s; restored): %s", cmd, ErrTampered, what, when)
}

// readRegular reads a file that is a file, not a link.
func readRegular(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return os.ReadFile(p)
}
