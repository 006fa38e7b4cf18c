package claudeproc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The CLI keeps state in its config directory that it acts on without
// asking: the shell snapshot it sources before every Bash command, the
// session environment, and the transcripts `--resume` replays to the
// model. A command of one thread that could write another thread's would
// run code there, or put words in its model's mouth. So every runner gives
// each thread a home of its own.

// HomeKey is what a session's CLI home is kept by: its thread, or its
// channel when no thread is given.
func (s Session) HomeKey() string {
	if s.Thread != "" {
		return s.Thread
	}
	return s.Channel
}

// homeName is the directory of s's home below a home base: the first 16
// bytes of sha256(HomeKey), hex. Keys hold characters a file name may not.
func homeName(s Session) string {
	sum := sha256.Sum256([]byte(s.HomeKey()))
	return hex.EncodeToString(sum[:16])
}

// HomeIn is the home a runner with home base base gives s.
func HomeIn(base string, s Session) string { return filepath.Join(base, homeName(s)) }

// makeHome creates a session's home, 0700, in base (made 0700 too if
// missing), checks it is a directory of its own (not a link somewhere
// else), and marks it used now: the CLI changes nothing in the home itself
// when it resumes, so its modification time is when a session of the
// thread last started (operators prune idle homes by it).
func makeHome(base, home string) error {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("make the CLI homes %s: %w", base, err)
	}
	if err := os.Mkdir(home, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("make the CLI home: %w", err)
	}
	fi, err := os.Lstat(home)
	if err != nil {
		return fmt.Errorf("the CLI home: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the CLI home %s is not a directory", home)
	}
	now := time.Now()
	if err := os.Chtimes(home, now, now); err != nil {
		return fmt.Errorf("mark the CLI home used: %w", err)
	}
	return nil
}

// removeHome removes s's home below base with all in it; one not there is
// no error. A link in its place is removed, not followed.
func removeHome(base string, s Session) error {
	if base == "" {
		return nil
	}
	if err := os.RemoveAll(HomeIn(base, s)); err != nil {
		return fmt.Errorf("remove the CLI home of %s: %w", s.HomeKey(), err)
	}
	return nil
}

// RemoveHome removes s's CLI home (HomeBase/<hash>) with its transcripts:
// a later --resume of its sessions finds nothing. Call it only when no
// process of s runs. Without a HomeBase it does nothing: the CLI's state is
// the bot user's own.
func (l Local) RemoveHome(_ context.Context, s Session) error { return removeHome(l.HomeBase, s) }

// RemoveHome removes s's home (HomeBase/<hash>) with its transcripts: a
// later --resume of its sessions finds nothing. Call it only when no
// process of s runs.
func (s Sandbox) RemoveHome(_ context.Context, sess Session) error {
	return removeHome(s.HomeBase, sess)
}

// setEnv is env with name set to value, any earlier entry of it dropped.
func setEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}
