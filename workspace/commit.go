package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// defaultAuthor commits when Options.Author is not set.
var defaultAuthor = Person{Name: "claudeops", Email: "claudeops@localhost"}

// Author is the identity the bot commits with (Options.Author, or its
// default).
func (m *Manager) Author() Person { return m.author }

// Commit commits everything in the worktree (git add -A semantics: tracked
// and untracked files, not ignored ones) to its branch, with message (a
// default when blank; kept byte for byte otherwise, a final newline added)
// and by as the author (Options.Author fills what by lacks, and commits).
// When there is nothing to commit, changed is false, no commit is made and
// commit is the branch's tip. The worktree's index is left matching the
// commit. No hook or filter runs.
func (m *Manager) Commit(ctx context.Context, wt Worktree, message string, by Person) (commit string, changed bool, err error) {
	r, err := m.open(wt)
	if err != nil {
		return "", false, err
	}
	if err := treeDir(wt); err != nil {
		return "", false, err
	}
	unlock, err := m.lock(ctx, r.key)
	if err != nil {
		return "", false, err
	}
	defer unlock()
	return m.commit(ctx, r, wt, adminDir(r, wt), message, by)
}

// commit is Commit under the clone's lock. With no admin directory (a
// removal a crash interrupted) it stages into a temporary index instead.
func (m *Manager) commit(ctx context.Context, r *repoRef, wt Worktree, admin, message string, by Person) (string, bool, error) {
	if strings.ContainsRune(message, 0) {
		return "", false, fmt.Errorf("commit %s: the message holds a NUL byte", wt.Branch)
	}
	ref := "refs/heads/" + wt.Branch
	parent, err := m.revParse(ctx, r, ref+"^{commit}")
	if errors.Is(err, ErrTampered) {
		return "", false, fmt.Errorf("commit %s: %w", wt.Branch, err)
	}
	if err != nil {
		return "", false, fmt.Errorf("commit %s: %w (%w)", wt.Branch, ErrGone, err)
	}
	index := ""
	if admin != "" {
		index = filepath.Join(admin, "index")
		if _, err := os.Stat(index); errors.Is(err, fs.ErrNotExist) {
			index = ""
		} else if err != nil {
			return "", false, fmt.Errorf("commit %s: %w", wt.Branch, err)
		}
	}
	var tree string
	if index != "" {
		tree, err = m.stage(ctx, r, wt, index)
	} else {
		tree, err = m.snapshot(ctx, r, wt, "")
	}
	if err != nil {
		return "", false, fmt.Errorf("commit %s: stage: %w", wt.Branch, err)
	}
	parentTree, err := m.revParse(ctx, r, parent+"^{tree}")
	if err != nil {
		return "", false, fmt.Errorf("commit %s: %w", wt.Branch, err)
	}
	if tree == parentTree {
		return parent, false, nil
	}
	if strings.TrimSpace(message) == "" {
		message = "claudeops: work on " + wt.Branch
	}
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	author := cleanPerson(by)
	if author.Name == "" {
		author.Name = m.author.Name
	}
	if author.Email == "" {
		author.Email = m.author.Email
	}
	out, err := m.run(ctx, gitCall{repo: r, stdin: []byte(message), args: []string{"commit-tree", tree, "-p", parent},
		env: []string{
			"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email,
			"GIT_COMMITTER_NAME=" + m.author.Name, "GIT_COMMITTER_EMAIL=" + m.author.Email,
		}})
	if err != nil {
		return "", false, fmt.Errorf("commit %s: %w", wt.Branch, err)
	}
	commit := strings.TrimSpace(string(out))
	// Compare-and-swap: a commit made meanwhile in the worktree is never overwritten.
	if _, err := m.run(ctx, gitCall{repo: r, args: []string{"update-ref", "-m", "claudeops: commit", ref, commit, parent}}); err != nil {
		return "", false, fmt.Errorf("commit %s: move the branch: %w", wt.Branch, err)
	}
	m.log.Info("committed", "repo", Redact(wt.Repo), "branch", wt.Branch, "commit", commit)
	return commit, true, nil
}

// cleanPerson drops what git would refuse or misread in an identity
// (control characters, "<", ">") and trims the ends.
func cleanPerson(p Person) Person {
	clean := func(s string) string {
		s = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || r == '<' || r == '>' {
				return -1
			}
			return r
		}, s)
		return strings.Trim(s, " .,:;\"'\\")
	}
	return Person{Name: clean(p.Name), Email: clean(p.Email)}
}

// Push pushes the worktree's branch to the remote's branch of the same
// name, creating it: only refs/heads/<branch>:refs/heads/<branch>, never
// forced, no tags, no hook. A rejection (the remote's branch moved) is an
// error carrying git's message. It works on a kept branch whose worktree
// was removed. While git runs, the push is recorded with owner (who is to
// be told, a thread's key): should the bot die meanwhile, the next start
// finds it among CutPushes.
func (m *Manager) Push(ctx context.Context, wt Worktree, owner string) error {
	r, err := m.open(wt)
	if err != nil {
		return err
	}
	unlock, err := m.lock(ctx, r.key)
	if err != nil {
		return err
	}
	defer unlock()
	ref := "refs/heads/" + wt.Branch
	if ok, err := m.refExists(ctx, r, ref); err != nil {
		return fmt.Errorf("push %s: %w", wt.Branch, err)
	} else if !ok {
		return fmt.Errorf("push %s: %w", wt.Branch, ErrGone)
	}
	commit, err := m.revParse(ctx, r, ref+"^{commit}")
	if err != nil {
		return fmt.Errorf("push %s: %w", wt.Branch, err)
	}
	done, err := m.beginPush(r, wt, commit, owner)
	if err != nil {
		return fmt.Errorf("push %s: record it: %w", wt.Branch, err)
	}
	defer done()
	// The commit recorded, not what a session's git may have made the
	// branch since: the record names what was sent.
	if _, err := m.run(ctx, gitCall{repo: r, slow: true, env: r.auth, args: []string{
		"push", "--no-verify", "--no-follow-tags", "--no-recurse-submodules", "origin", commit + ":" + ref,
	}}); err != nil {
		return fmt.Errorf("push %s to %s: %w", wt.Branch, Redact(wt.Repo), err)
	}
	m.log.Info("pushed", "repo", Redact(wt.Repo), "branch", wt.Branch)
	return nil
}

// Unpushed counts the branch's commits the remote does not have, as far as
// the last fetch or push knows: those in none of the remote's branches,
// and since Base when the branch was never pushed.
func (m *Manager) Unpushed(ctx context.Context, wt Worktree) (int, error) {
	r, err := m.open(wt)
	if err != nil {
		return 0, err
	}
	return m.unpushed(ctx, r, wt)
}

func (m *Manager) unpushed(ctx context.Context, r *repoRef, wt Worktree) (int, error) {
	ref := "refs/heads/" + wt.Branch
	if ok, err := m.refExists(ctx, r, ref); err != nil {
		return 0, fmt.Errorf("unpushed commits of %s: %w", wt.Branch, err)
	} else if !ok {
		return 0, fmt.Errorf("unpushed commits of %s: %w", wt.Branch, ErrGone)
	}
	out, err := m.run(ctx, gitCall{repo: r, args: []string{
		"rev-list", "--count", ref, "--not", wt.Base, "--remotes=origin",
	}})
	if err != nil {
		return 0, fmt.Errorf("unpushed commits of %s: %w", wt.Branch, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, fmt.Errorf("unpushed commits of %s: %q: %w", wt.Branch, out, err)
	}
	return n, nil
}
